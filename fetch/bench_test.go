package fetch_test

import (
	"sync/atomic"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// benchFleet starts agents on several loopback addresses so connection
// reuse looks like a crawl of many hosts.
func benchFleet(b *testing.B, behavior agentfleet.Behavior, n int, tls bool) ([]*agentfleet.AgentHandle, *fetch.Fetcher) {
	fleet := agentfleet.Start(b, agentfleet.Options{Hosts: 16, BaseAddr: "127.0.2.1", TLS: tls})
	agents := make([]*agentfleet.AgentHandle, n)
	for i := range agents {
		agents[i] = fleet.Add(agentfleet.Agent{Behavior: behavior})
	}
	p := loopbackPolicy()
	p.RootCAs = fleet.CertPool()
	return agents, newFetcher(b, fetch.Config{Policy: p})
}

func fetchParallel(b *testing.B, agents []*agentfleet.AgentHandle, f *fetch.Fetcher) {
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a := agents[next.Add(1)%int64(len(agents))]
			if _, err := f.Fetch(b.Context(), fetch.Request{URL: a.URL(), FollowRedirects: true, SameOriginOnly: true}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fetches/s")
}

// BenchmarkFetch measures full fetches of ~2 KiB cards over loopback HTTP
// (policy checks, conditional headers, body limit), reported as fetches/s.
func BenchmarkFetch(b *testing.B) {
	b.Run("sequential", func(b *testing.B) {
		agents, f := benchFleet(b, agentfleet.Normal, 256, false)
		i := 0
		for b.Loop() {
			if _, err := f.Fetch(b.Context(), fetch.Request{URL: agents[i%len(agents)].URL(), FollowRedirects: true, SameOriginOnly: true}); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fetches/s")
	})
	b.Run("parallel", func(b *testing.B) {
		agents, f := benchFleet(b, agentfleet.Normal, 256, false)
		fetchParallel(b, agents, f)
	})
	// TLS with connection reuse: handshakes only when a connection is new.
	b.Run("parallel-tls", func(b *testing.B) {
		agents, f := benchFleet(b, agentfleet.Normal, 256, true)
		fetchParallel(b, agents, f)
	})
}

// BenchmarkFetch304 measures revalidation of unchanged cards: the request
// carries the stored ETag and the agent answers 304 without a body.
func BenchmarkFetch304(b *testing.B) {
	agents, f := benchFleet(b, agentfleet.Conditional, 256, false)
	etags := make([]string, len(agents))
	for i, a := range agents {
		resp, err := f.Fetch(b.Context(), fetch.Request{URL: a.URL()})
		if err != nil {
			b.Fatal(err)
		}
		etags[i] = resp.Header.Get("ETag")
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) % int64(len(agents))
			resp, err := f.Fetch(b.Context(), fetch.Request{URL: agents[i].URL(), ETag: etags[i]})
			if err != nil || !resp.NotModified {
				b.Errorf("fetch: %v", err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fetches/s")
}
