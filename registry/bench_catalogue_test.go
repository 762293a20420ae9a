package registry_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// envBenchAgents sizes the catalogue of BenchmarkCatalogueWrites.
const envBenchAgents = "CARDEX_BENCH_AGENTS"

// benchAgents is the catalogue size: CARDEX_BENCH_AGENTS, or 2,000 so a
// CI smoke run (-benchtime 1x) stays short.
func benchAgents(b *testing.B) int {
	v := os.Getenv(envBenchAgents)
	if v == "" {
		return 2000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number of agents", envBenchAgents, v)
	}
	return n
}

// catalogue is a store holding agents crawled once (one version each,
// pending review), in the shape `cardex serve` leaves them after a crawl.
type catalogue struct {
	svc  *registry.Service
	c    *clock
	raw  []byte
	card *agentcard.Card
	next atomic.Int64 // URL counter
}

// grow submits n agents (8 at a time: PostgreSQL takes them in parallel,
// SQLite's one writer in turn) and records a first fetch for each, in
// batches of 64 as the scheduler does. It returns their ids in submission
// order.
func (cat *catalogue) grow(b *testing.B, n int) []string {
	ctx := context.Background()
	ids := make([]string, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				k := cat.next.Add(1)
				u := fmt.Sprintf("https://h%d.example.com/agents/%d/card.json", k%50, k)
				a, err := cat.svc.Submit(ctx, admin, u, "")
				if err != nil {
					errs <- err
					return
				}
				ids[i] = a.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	for {
		due, err := cat.svc.ClaimDue(ctx, "seed", cat.c.Now(), time.Minute, 512, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			return ids
		}
		for start := 0; start < len(due); start += 64 {
			var fs []registry.AgentFetch
			for _, d := range due[start:min(start+64, len(due))] {
				fs = append(fs, registry.AgentFetch{AgentID: d.ID, Result: registry.FetchResult{
					Attempt: registry.FetchAttempt{At: cat.c.Now(), URL: d.CardURL, HTTPStatus: 200},
					Raw:     cat.raw, Card: cat.card, Trust: registry.TrustUnsigned, NextFetchAt: cat.c.Now().Add(time.Hour)}})
			}
			rerrs, err := cat.svc.RecordFetches(ctx, "seed", fs)
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range rerrs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkCatalogueWrites measures the catalogue's write paths once it is
// large: CARDEX_BENCH_AGENTS agents (default 2,000), each crawled once
// and pending review, then
//
//   - submit: one new agent per iteration (Service.Submit as POST
//     /api/v1/agents calls it);
//   - approve: one pending agent per iteration (Service.Act, as POST
//     /api/v1/agents/{id}/approve);
//   - approve-while-crawling: the same while a crawler re-crawls the
//     catalogue (every agent due, 304s recorded in batches of 64), so
//     approvals wait for the crawler's transactions as they do in `cardex
//     serve`;
//   - idle-tick: with every agent approved, crawled and probed (nothing
//     due), one crawl claim and one probe claim — what the crawler's and
//     the prober's ticks cost a server that has nothing to do.
//
// Each reports the p50 and p99 latency besides the mean (ns/op).
//
//	CARDEX_BENCH_AGENTS=100000 go test -run '^$' -bench CatalogueWrites -benchtime 2000x -timeout 1h ./registry/
func BenchmarkCatalogueWrites(b *testing.B) {
	n := benchAgents(b)
	benchStores(b, func(b *testing.B, s *registry.Store) {
		c := newClock()
		raw := cardJSON("Bench", "1")
		p, err := agentcard.Parse(raw, agentcard.Options{})
		if err != nil {
			b.Fatal(err)
		}
		cat := &catalogue{svc: newService(s, c), c: c, raw: raw, card: p.Card}
		start := time.Now()
		pending := cat.grow(b, n)
		b.Logf("catalogue of %d agents crawled in %s", n, time.Since(start).Round(time.Millisecond))

		b.Run("submit", func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				t0 := time.Now()
				k := cat.next.Add(1)
				u := fmt.Sprintf("https://s%d.example.com/agents/%d/card.json", k%50, k)
				if _, err := cat.svc.Submit(b.Context(), admin, u, ""); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
			}
			lat.report(b)
		})

		// take returns the next pending agent, growing the catalogue when
		// every seeded one is approved.
		take := func(b *testing.B) string {
			if len(pending) == 0 {
				b.StopTimer()
				pending = cat.grow(b, max(n/10, 100))
				b.StartTimer()
			}
			id := pending[0]
			pending = pending[1:]
			return id
		}
		approve := func(b *testing.B, lat *latencies) {
			id := take(b)
			t0 := time.Now()
			a, err := cat.svc.Act(b.Context(), admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)})
			if err != nil {
				b.Fatal(err)
			}
			if a.Status != registry.StatusApproved {
				b.Fatalf("approve %s: status %s", id, a.Status)
			}
			lat.add(time.Since(t0))
		}
		b.Run("approve", func(b *testing.B) {
			var lat latencies
			for i := 0; i < b.N; i++ {
				approve(b, &lat)
			}
			lat.report(b)
		})
		b.Run("approve-while-crawling", func(b *testing.B) {
			ctx, cancel := context.WithCancel(b.Context())
			crawled := make(chan int)
			c.Advance(2 * time.Hour) // every agent is due again
			go func() { crawled <- recrawl(ctx, cat.svc, c) }()
			var lat latencies
			for i := 0; i < b.N; i++ {
				approve(b, &lat)
			}
			cancel()
			b.ReportMetric(float64(<-crawled)/b.Elapsed().Seconds(), "recrawls/s")
			lat.report(b)
		})

		// Setup for the idle tick: every agent approved, probed once and
		// crawled, so nothing is due for an hour.
		for _, id := range pending {
			if _, err := cat.svc.Act(b.Context(), admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
				b.Fatal(err)
			}
		}
		pending = nil
		recrawl(b.Context(), cat.svc, c)
		probed := probeAll(b, cat.svc, c)
		b.Run("idle-tick", func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				t0 := time.Now()
				due, err := cat.svc.ClaimDue(b.Context(), "crawler", c.Now(), time.Minute, 128, 2)
				if err != nil || len(due) != 0 {
					b.Fatalf("crawl claim with nothing due: %d agents, %v", len(due), err)
				}
				probes, err := cat.svc.ClaimProbes(b.Context(), "prober", c.Now(), time.Minute, 64, 2)
				if err != nil || len(probes) != 0 {
					b.Fatalf("probe claim with nothing due: %d agents, %v", len(probes), err)
				}
				lat.add(time.Since(t0))
			}
			b.ReportMetric(float64(probed), "approved")
			lat.report(b)
		})
	})
}

// probeAll records one answering probe round for every approved agent,
// due again in an hour, and returns how many it probed.
func probeAll(b *testing.B, svc *registry.Service, c *clock) int {
	n := 0
	for {
		due, err := svc.ClaimProbes(b.Context(), "seed", c.Now(), time.Minute, 512, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			return n
		}
		rounds := make([]registry.ProbeRound, len(due))
		for i, d := range due {
			rounds[i] = registry.ProbeRound{AgentID: d.ID, At: c.Now(), Next: c.Now().Add(time.Hour),
				Probes: []registry.ProbeResult{{URL: "https://a.example.com/a2a", Binding: "JSONRPC", ProtocolVersion: "1.0",
					Outcome: registry.OutcomeAnswering, Latency: time.Millisecond, HTTPStatus: 200}}}
		}
		errs, err := svc.RecordProbes(b.Context(), "seed", rounds)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		n += len(due)
	}
}

// recrawl records a 304 for every due agent, claims of 128 in batches of
// 64, until ctx ends or nothing is due; it returns how many it recorded.
func recrawl(ctx context.Context, svc *registry.Service, c *clock) int {
	n := 0
	for ctx.Err() == nil {
		due, err := svc.ClaimDue(ctx, "crawler", c.Now(), time.Minute, 128, 1<<20)
		if err != nil || len(due) == 0 {
			return n
		}
		for start := 0; start < len(due); start += 64 {
			var fs []registry.AgentFetch
			for _, d := range due[start:min(start+64, len(due))] {
				fs = append(fs, registry.AgentFetch{AgentID: d.ID, Result: registry.FetchResult{
					Attempt:     registry.FetchAttempt{At: c.Now(), URL: d.CardURL, HTTPStatus: 304},
					NotModified: true, NextFetchAt: c.Now().Add(time.Hour)}})
			}
			if _, err := svc.RecordFetches(ctx, "crawler", fs); err != nil {
				return n
			}
			n += len(fs)
		}
	}
	return n
}

// latencies collects per-operation wall times for percentiles.
type latencies []time.Duration

func (l *latencies) add(d time.Duration) { *l = append(*l, d) }

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(q float64) float64 {
		return float64(l[min(len(l)-1, int(q*float64(len(l))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
