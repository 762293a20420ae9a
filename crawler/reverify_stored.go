package crawler

import (
	"context"
	"net/http"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// StoredSource is what ReverifyStored needs of the registry: the versions
// marked to be judged again (migrations 00170) and a place for the new
// judgement.
type StoredSource interface {
	StoredToReverify(ctx context.Context, afterAgent string, afterSeq int64, limit int) ([]registry.StoredVersion, error)
	ApplyReverify(ctx context.Context, v registry.StoredVersion, res registry.FetchResult) error
}

// reverifyBatch is how many marked versions one read returns.
const reverifyBatch = 64

// ReverifyStored judges the marked stored versions again from their bytes,
// exactly as a fetched card is judged (parse, verify, Cardex's view of the
// card), without fetching the card: only the key sets the signatures name
// are fetched, through the verifier's cache. It returns how many versions
// it judged. An agent whose versions read `invalid` under the earlier
// coverage rule becomes `verified` without a new crawl
// (docs/verification.md).
func (s *Scheduler) ReverifyStored(ctx context.Context, src StoredSource) (int, error) {
	n := 0
	after, afterSeq := "", int64(0)
	for {
		batch, err := src.StoredToReverify(ctx, after, afterSeq, reverifyBatch)
		if err != nil || len(batch) == 0 {
			return n, err
		}
		for _, v := range batch {
			after, afterSeq = v.AgentID, v.Seq
			res, ok := s.pipe.judgeStored(ctx, v)
			if !ok {
				continue
			}
			if err := src.ApplyReverify(ctx, v, res); err != nil {
				return n, err
			}
			n++
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}

// judgeStored parses and verifies a stored version's bytes as parseAndVerify
// does a fetched body (keys bound to the agent's card URL origin), false
// when the bytes no longer make a card or the origin is refused.
func (p *Pipeline) judgeStored(ctx context.Context, v registry.StoredVersion) (registry.FetchResult, bool) {
	origin, err := fetch.OriginOf(v.CardURL)
	if err != nil {
		return registry.FetchResult{}, false
	}
	u := v.FetchedURL
	if u == "" {
		u = v.CardURL
	}
	var out Outcome
	p.parseAndVerify(ctx, &out, &fetch.Response{URL: u, Body: v.Raw, Header: http.Header{"Content-Type": {"application/json"}}}, origin, v.PinnedKeys)
	if out.Err != nil || out.Parsed == nil {
		return registry.FetchResult{}, false
	}
	return FetchResult(out), true
}
