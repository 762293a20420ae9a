package crawler_test

import (
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/verifier"
)

// docs/threats.md D.52 (A2A §8.4.3 "revoked keys MUST NOT be used"): once a
// key leaves the agent's key set, the card stops verifying as soon as the
// cached set expires (the verifier's cache runs on the injected clock), and
// not before: within the TTL the cached set is used without a request.
func TestCrawlKeyRemovedStopsVerifyingAfterCacheTTL(t *testing.T) {
	k := newSigningKey(t)
	m := newMutableAgent(t)
	m.setJWKS(jwks(t, k))
	m.card(k.sign(t, agentfleet.GenerateCard(2, m.Origin(), "1.0.0"), m.Origin()+"/.well-known/jwks.json"))
	clk := newClock()
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	p := &crawler.Pipeline{Fetcher: f, Verifier: verifier.New(verifier.Config{Fetcher: f, Now: clk.Now, CacheTTL: 10 * time.Minute})}
	target := crawler.Target{CardURL: m.URL()}
	crawl := func() crawler.Outcome {
		t.Helper()
		out := p.Crawl(t.Context(), target)
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		return out
	}
	if out := crawl(); out.Verdict.Status != verifier.StatusVerified {
		t.Fatalf("with the key published: %+v", out.Verdict)
	}
	m.setJWKS(jwks(t)) // the publisher revokes the key
	clk.Advance(9 * time.Minute)
	if out := crawl(); out.Verdict.Status != verifier.StatusVerified || m.keys.Load() != 1 {
		t.Errorf("within the cache TTL: %s after %d key set fetches, want verified from the cache", out.Verdict.Status, m.keys.Load())
	}
	clk.Advance(2 * time.Minute)
	out := crawl()
	if out.Verdict.Status != verifier.StatusError || m.keys.Load() != 2 {
		t.Errorf("after the cache TTL: %s after %d key set fetches, want error (unverifiable) after a fresh fetch", out.Verdict.Status, m.keys.Load())
	}
	if got := crawler.Trust(out.Verdict); got != "error" {
		t.Errorf("registry trust %q", got)
	}
}
