package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// fixedResolver answers every name with its address: the one name a
// federation test resolves is a peer on the metadata address.
type fixedResolver map[string]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// peerFetcher is the crawler's client as cardex serve builds it for
// --ard-peer, allowed onto loopback for the test peers only.
func peerFetcher(t *testing.T) *fetch.Fetcher {
	t.Helper()
	p := fetch.DefaultPolicy()
	p.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	p.AllowInsecureHTTP = true
	f, err := fetch.New(fetch.Config{Policy: p, Resolver: fixedResolver{"metadata.peer.example": netip.MustParseAddr("169.254.169.254")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// brokenPeers are ARD peers that fail each its own way: slow (answers
// only when the caller gives up), a 10 MB answer, an HTML page, a
// redirect to the metadata address, a name on the metadata address, and
// an answer of wrong types with one usable result.
func brokenPeers(t *testing.T) (peers []string, wrongTypes string) {
	t.Helper()
	release := make(chan struct{})
	serve := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		// A peer the client gave up on may still be writing: its
		// connections are cut, not waited for.
		t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
		return srv.URL + "/ard"
	}
	// Registered after the servers, so it runs before they close.
	defer t.Cleanup(func() { close(release) })
	slow := serve(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	huge := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results":[`)
		item := `{"identifier":"urn:air:huge.example:agent:x","displayName":"Weather","type":"application/a2a-agent-card+json","url":"https://huge.example/c.json","score":100},`
		for n := 0; n < 10<<20; n += len(item) {
			if _, err := fmt.Fprint(w, item); err != nil {
				return
			}
		}
		fmt.Fprint(w, `{}]}`)
	})
	html := serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>Weather</title>")
	})
	redirect := serve(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
	})
	wrongTypes = serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results":[{"identifier":7,"displayName":"Weather","type":"t","url":"https://w.example/c.json"},
 {"identifier":"urn:air:w.example:agent:ok","displayName":"Weather OK","type":"application/agent-card+json","url":"https://w.example/ok.json","score":"high"},
 {"identifier":"urn:air:w.example:agent:inline","displayName":"Inline","type":"t","data":{"name":"x"}},
 {"identifier":"urn:air:w.example:agent:js","displayName":"Script","type":"t","url":"javascript:alert(1)"},
 "weather"],"pageToken":{}}`)
	})
	_, port, _ := strings.Cut(strings.TrimPrefix(html, "http://"), ":")
	port, _, _ = strings.Cut(port, "/")
	metadataName := "http://metadata.peer.example:" + port + "/ard"
	return []string{slow, huge, html, redirect, metadataName, wrongTypes}, wrongTypes
}

// docs/discovery.md "Federated search": two Cardex instances ask each
// other (federation none on the way out, so no loop), merge by reciprocal
// rank fusion with each result's source, and a broken peer costs at most
// the deadline and a bounded read; nothing a peer says is stored.
func TestARDFederation(t *testing.T) {
	broken, wrongTypes := brokenPeers(t)
	// B reaches A through a forwarder, since A's address is known only
	// once A is built.
	var aURL atomic.Value
	fwd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, _ := url.Parse(aURL.Load().(string))
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(fwd.Close)
	fetcher := peerFetcher(t)
	const deadline = time.Second
	b := newSearchHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.ARD = ARDConfig{Peers: []string{fwd.URL + "/ard"}, Call: crawler.ARDPeerCall(fetcher), Deadline: deadline}
	})
	bAdmin := b.token(registry.RoleAdmin)
	bWeather := b.publish("bureau.example.org", testCard{name: "Weather Bureau", description: "Official weather warnings.", provider: "Bureau",
		skills: []skill{{id: "warn", name: "Warnings", description: "Weather warnings.", tags: []string{"weather"}}}}, bAdmin, true)
	b.sync()

	peers := append([]string{b.srv.URL + "/ard"}, broken...)
	a := newSearchHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.ARD = ARDConfig{Peers: peers, Call: crawler.ARDPeerCall(fetcher), Deadline: deadline}
	})
	aURL.Store(a.srv.URL)
	c := newCatalogue(a)
	before := a.list("pageSize=100", c.admin).TotalSize

	search := func(h *searchHarness, fed string) (ardSearchJSON, time.Duration) {
		t.Helper()
		start := time.Now()
		var res ardSearchJSON
		h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"weather"},"federation":"` + fed + `","pageSize":10}`)}).json(t, &res)
		return res, time.Since(start)
	}
	sources := func(res ardSearchJSON) map[string][]string {
		out := map[string][]string{}
		for _, r := range res.Results {
			out[r.Source] = append(out[r.Source], r.DisplayName)
			if r.Score == nil || *r.Score < 0 || *r.Score > 100 {
				t.Fatalf("score %+v", r)
			}
		}
		return out
	}

	res, took := search(a, "auto")
	got := sources(res)
	if strings.Join(got[a.srv.URL+"/ard"], ",") != "Weather Oracle" || strings.Join(got[b.srv.URL+"/ard"], ",") != "Weather Bureau" ||
		strings.Join(got[wrongTypes], ",") != "Weather OK" || len(got) != 3 || len(res.Results) != 3 || res.Referrals != nil {
		t.Fatalf("auto from A: %s", mustJSON(res))
	}
	for _, r := range res.Results {
		switch r.Source {
		case b.srv.URL + "/ard":
			if r.Identifier != "urn:air:127.0.0.1:cardex:"+bWeather.ID {
				t.Fatalf("B's identifier %+v", r)
			}
		case wrongTypes:
			if *r.Score != 0 || r.Type != "application/a2a-agent-card+json" || r.URL != "https://w.example/ok.json" {
				t.Fatalf("a wrong-typed peer result %+v", r)
			}
		}
	}
	// The slow peer costs the deadline, not more.
	t.Logf("auto with %d peers (6 broken) answered in %v, deadline %v", len(peers), took, deadline)
	if took > deadline+3*time.Second {
		t.Fatalf("auto took %v with a %v deadline", took, deadline)
	}
	// Equal ranks: the local list comes first.
	if res.Results[0].Source != a.srv.URL+"/ard" {
		t.Fatalf("order %s", mustJSON(res))
	}

	// B asks A back.
	res, _ = search(b, "auto")
	got = sources(res)
	if strings.Join(got[b.srv.URL+"/ard"], ",") != "Weather Bureau" || strings.Join(got[fwd.URL+"/ard"], ",") != "Weather Oracle" {
		t.Fatalf("auto from B: %s", mustJSON(res))
	}

	// Referrals: the local results and the peers as registries.
	res, took = search(a, "referrals")
	if len(res.Results) != 1 || res.Results[0].Source != a.srv.URL+"/ard" || len(res.Referrals) != len(peers) || took > deadline {
		t.Fatalf("referrals: %s in %v", mustJSON(res), took)
	}
	var urls []string
	for _, r := range res.Referrals {
		if r.Type != "application/ai-registry+json" || !strings.HasPrefix(r.Identifier, "urn:air:") || r.DisplayName == "" {
			t.Fatalf("referral %+v", r)
		}
		urls = append(urls, r.URL)
	}
	if !slices.Equal(urls, peers) {
		t.Fatalf("referral urls %v", urls)
	}
	res, _ = search(a, "none")
	if len(res.Results) != 1 || res.Referrals != nil {
		t.Fatalf("none: %s", mustJSON(res))
	}
	// A page of one: its own result stays, and one peer result joins it
	// (equal ranks: the first peer in --ard-peer order).
	var page ardSearchJSON
	a.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"weather"},"pageSize":1}`)}).json(t, &page)
	if len(page.Results) != 2 || page.Results[0].Source != a.srv.URL+"/ard" || page.Results[1].Source != b.srv.URL+"/ard" {
		t.Fatalf("auto, page of one: %s", mustJSON(page))
	}
	// Peers are asked for a first page only: a page token continues
	// this registry's own results.
	var two ardSearchJSON
	a.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"acme"},"pageSize":1,"federation":"none"}`)}).json(t, &two)
	if two.PageToken == "" {
		t.Fatalf("no second page: %s", mustJSON(two))
	}
	start := time.Now()
	a.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"acme"},"pageSize":1,"pageToken":"` + two.PageToken + `"}`)}).json(t, &page)
	if len(page.Results) != 1 || page.Results[0].Source != a.srv.URL+"/ard" || time.Since(start) > deadline {
		t.Fatalf("auto, second page: %s", mustJSON(page))
	}

	// Nothing a peer said is stored.
	if after := a.list("pageSize=100", c.admin).TotalSize; after != before {
		t.Fatalf("agents %d → %d after federated searches", before, after)
	}
	logs := a.logs.String()
	for _, want := range []string{"blocked_address", "too_large", "cross_origin_redirect"} {
		if !strings.Contains(logs, want) {
			t.Errorf("no peer left out for %s in the log", want)
		}
	}
}
