package discover

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cardexhq/cardex/aicatalog"
)

// Federation modes of an ARD search (docs/discovery.md "Federated search").
const (
	FederationAuto      = "auto"      // ask the peers too and merge
	FederationReferrals = "referrals" // name the peers; the client asks them
	FederationNone      = "none"      // this registry only
)

// Peer bounds: how long a federated search waits for its peers, how much
// of each answer it reads, and how many of each peer's results it keeps.
const (
	DefaultPeerDeadline = 2 * time.Second
	MaxPeerResults      = 100
)

// ARDResult is one result of an ARD search: an entry with the relevance
// its source gave it (0–100, never a trust verdict) and the registry it
// came from.
type ARDResult struct {
	ARDEntry
	Score  int    `json:"score"`
	Source string `json:"source"`
}

// PeerCall posts body to url and returns the answer's body: the crawler's
// hardened client (crawler.ARDPeerCall: reserved addresses refused after
// DNS and on every redirect, a bounded read), within ctx.
type PeerCall func(ctx context.Context, url string, body []byte) ([]byte, error)

// PeerStatus is what one peer gave a federated search.
type PeerStatus struct {
	Peer    string
	Results int
	Err     error
}

// AskPeers sends an ARD search for text (and tags) to every peer's POST
// {peer}/search at once, federation none so peers do not fan out further,
// and waits at most deadline: what arrived in time and reads as an ARD
// answer comes back, per peer in peers' order (nil for a peer that failed
// or was late). Each peer's results are checked member by member
// (peerResult) and their source is the peer asked, whatever they claim.
func AskPeers(ctx context.Context, peers []string, call PeerCall, text string, tags []string, size int, deadline time.Duration) ([][]ARDResult, []PeerStatus) {
	if deadline <= 0 {
		deadline = DefaultPeerDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	req := map[string]any{"query": map[string]any{"text": text}, "federation": FederationNone, "pageSize": size}
	if len(tags) > 0 {
		req["query"].(map[string]any)["filter"] = map[string]any{"tags": tags}
	}
	body, _ := json.Marshal(req)
	lists := make([][]ARDResult, len(peers))
	status := make([]PeerStatus, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		status[i].Peer = p
		wg.Go(func() {
			b, err := call(ctx, strings.TrimSuffix(p, "/")+"/search", body)
			if err == nil {
				lists[i], err = peerResults(b, p, size)
			}
			status[i].Err, status[i].Results = err, len(lists[i])
		})
	}
	// Every call ends by ctx's deadline: the client's own timeout and
	// ctx bound it, so waiting here costs at most the deadline.
	wg.Wait()
	return lists, status
}

// errPeerAnswer is a peer's answer that is not an ARD search response.
type errPeerAnswer string

func (e errPeerAnswer) Error() string { return "peer answer: " + string(e) }

// peerResults reads a peer's answer: a JSON object whose results is an
// array; each result that passes peerResult is kept, at most size.
func peerResults(b []byte, peer string, size int) ([]ARDResult, error) {
	var doc struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, errPeerAnswer("not an ARD search response")
	}
	var out []ARDResult
	for _, raw := range doc.Results {
		if r, ok := peerResult(raw, peer); ok {
			out = append(out, r)
			if len(out) == min(size, MaxPeerResults) {
				break
			}
		}
	}
	return out, nil
}

// Bounds of a peer's result's members: longer ones drop the result.
const (
	maxPeerIdentifier = 1024
	maxPeerText       = 512
	maxPeerURL        = 2048
	maxPeerDesc       = 2048
)

// peerResult keeps what an orchestrator needs of a peer's result, checked:
// identifier, displayName and type strings within bounds, an http(s) url,
// an integer score 0–100 (anything else reads as 0). A result with inline
// data instead of a url is dropped: Cardex relays references, never a
// stranger's document. Source is the peer.
func peerResult(raw json.RawMessage, peer string) (ARDResult, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ARDResult{}, false
	}
	str := func(k string, max int) (string, bool) {
		var s string
		if json.Unmarshal(m[k], &s) != nil || s == "" || len(s) > max || !utf8.ValidString(s) {
			return "", false
		}
		return s, true
	}
	var r ARDResult
	var ok bool
	if r.Identifier, ok = str("identifier", maxPeerIdentifier); !ok {
		return r, false
	}
	if r.DisplayName, ok = str("displayName", maxPeerText); !ok {
		return r, false
	}
	if r.Type, ok = str("type", maxPeerText); !ok {
		return r, false
	}
	r.Type = aicatalog.CanonicalType(r.Type)
	if r.URL, ok = str("url", maxPeerURL); !ok {
		return r, false
	}
	if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return r, false
	}
	r.Description, _ = str("description", maxPeerDesc)
	var score float64
	if json.Unmarshal(m["score"], &score) == nil && score >= 0 && score <= 100 && score == float64(int(score)) {
		r.Score = int(score)
	}
	r.Source = peer
	return r, true
}

// RRFK is the constant of reciprocal rank fusion: a result at rank r of a
// list adds 1/(RRFK+r) to its fused score.
const RRFK = 60

// Fuse merges ranked lists by reciprocal rank fusion: each result scores
// the sum over the lists of 1/(RRFK+rank), since the lists' own scores come
// from different registries and do not compare. One identifier (folded)
// listed by several lists is one result, the first list's copy, with the
// summed score. Ties keep the lists' order; at most size results.
func Fuse(lists [][]ARDResult, size int) []ARDResult {
	type fused struct {
		r     ARDResult
		score float64
		order int
	}
	by := map[string]*fused{}
	var all []*fused
	for _, l := range lists {
		for rank, r := range l {
			key, _ := aicatalog.FoldIdentifier(r.Identifier)
			f, ok := by[key]
			if !ok {
				f = &fused{r: r, order: len(all)}
				by[key] = f
				all = append(all, f)
			}
			f.score += 1 / float64(RRFK+rank+1)
		}
	}
	slices.SortStableFunc(all, func(a, b *fused) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.order - b.order
	})
	out := make([]ARDResult, 0, min(size, len(all)))
	for _, f := range all {
		if len(out) == size {
			break
		}
		out = append(out, f.r)
	}
	return out
}
