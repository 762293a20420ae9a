package crawler_test

import (
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/verifier"
)

// BenchmarkPipelineNotModified is the cost of a 304 with and without
// re-verifying the stored signed card (docs/threats.md D.52): one loopback
// agent answering 304 to its ETag, the key set cached (the common case
// within the verifier's TTL), one crawl per iteration.
func BenchmarkPipelineNotModified(b *testing.B) {
	k := newSigningKey(b)
	m := newMutableAgent(b)
	m.setJWKS(jwks(b, k))
	card := k.sign(b, agentfleet.GenerateCard(1, m.Origin(), "1.0.0"), m.Origin()+"/.well-known/jwks.json")
	m.set(conditionalCard(card))
	f := newFetcher(b, fetch.Config{Policy: loopbackPolicy()})
	p := &crawler.Pipeline{Fetcher: f, Verifier: verifier.New(verifier.Config{Fetcher: f})}
	for _, reverify := range []bool{false, true} {
		name := "304 only"
		target := crawler.Target{CardURL: m.URL(), ETag: `"v1"`}
		if reverify {
			name = "304 + re-verify"
			target.Latest, target.LatestURL = card, m.URL()
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				out := p.Crawl(b.Context(), target)
				if out.Err != nil || !out.NotModified || out.Reverified != reverify ||
					(reverify && out.Verdict.Status != verifier.StatusVerified) {
					b.Fatalf("outcome %+v", out)
				}
			}
		})
	}
}
