package crawler_test

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/verifier"
)

// benchAgents is the fleet size of the pipeline benchmark (docs/design.md
// performance targets: 10,000 agents).
const benchAgents = 10_000

// pipelineBench is one store with every fleet agent submitted and a
// scheduler on a fake clock, so "an hour later" costs no waiting.
type pipelineBench struct {
	svc   *registry.Service
	sched *crawler.Scheduler
	clk   *clock
	done  int64 // results settled so far
}

func newPipelineBench(b *testing.B, store *registry.Store, urls []string) *pipelineBench {
	b.Helper()
	clk := newClock()
	svc := registry.NewService(store, registry.ServiceConfig{Now: clk.Now, URLPolicy: registry.URLPolicy{
		AllowInsecureHTTP: true, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	// Submissions are setup, spread over a few goroutines so PostgreSQL's
	// round trips overlap.
	var wg sync.WaitGroup
	const submitters = 8
	for w := range submitters {
		wg.Go(func() {
			for i := w; i < len(urls); i += submitters {
				if _, err := svc.Submit(context.Background(), registry.Anonymous, urls[i], ""); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	f := newFetcher(b, fetch.Config{Policy: loopbackPolicy(), Logger: slog.New(slog.DiscardHandler)})
	sched, err := crawler.NewScheduler(crawler.SchedulerConfig{
		Registry: svc, Fetcher: f, Verifier: verifier.New(verifier.Config{Fetcher: f, Now: clk.Now}),
		Now: clk.Now, Tick: time.Hour,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sched.Shutdown(context.Background()) })
	return &pipelineBench{svc: svc, sched: sched, clk: clk}
}

// round kicks the scheduler and waits until every agent has been crawled
// and recorded once more; it returns the wall time of the round.
func (p *pipelineBench) round(b *testing.B) time.Duration {
	b.Helper()
	start := time.Now()
	p.done += benchAgents
	p.sched.Start()
	p.sched.Kick()
	polltest.Until(b, "the round to finish", 10*time.Minute, func() bool {
		s := p.sched.Stats()
		return s.Recorded+s.LeaseLost+s.RecordErrors >= p.done
	})
	d := time.Since(start)
	s := p.sched.Stats()
	if s.RecordErrors+s.LeaseLost+s.Expired != 0 {
		b.Fatalf("lost writes: %+v", s)
	}
	b.Logf("round of %d agents in %v; scheduler so far: %+v", benchAgents, d, s)
	return d
}

// BenchmarkCrawlPipeline crawls 10,000 fleet agents through the scheduler
// (claim with leases, fetch, strict parse, verify, RecordFetch) on each
// store: "new" is the first crawl of every agent (a version stored per
// agent), "unchanged" the re-crawl an hour later, answered 304 because the
// stored ETag is sent. "signed" agents carry an ES256 signature whose key
// set sits on their own host (fetched once per host, then cached). One b.Loop
// iteration is one full round; the metric is cards/s over the round.
func BenchmarkCrawlPipeline(b *testing.B) {
	if testing.Short() {
		b.Skip("10,000-agent benchmark")
	}
	conditional := agentfleet.Start(b, agentfleet.Options{Hosts: 50, BaseAddr: "127.0.3.1"})
	signed := agentfleet.Start(b, agentfleet.Options{Hosts: 200, BaseAddr: "127.0.4.1", Signer: verifierSigner})
	fleets := map[string][]string{}
	for range benchAgents {
		fleets["unsigned"] = append(fleets["unsigned"], conditional.Add(agentfleet.Agent{Behavior: agentfleet.Conditional}).URL())
		fleets["signed"] = append(fleets["signed"], signed.Add(agentfleet.Agent{Behavior: agentfleet.Signed}).URL())
	}
	stores := map[string]func(testing.TB) *registry.Store{
		registry.DialectSQLite: registrytest.SQLite, registry.DialectPostgres: registrytest.Postgres,
	}
	for _, dialect := range []string{registry.DialectSQLite, registry.DialectPostgres} {
		for _, kind := range []string{"unsigned", "signed"} {
			b.Run(dialect+"/"+kind+"/new", func(b *testing.B) {
				var total time.Duration
				for b.Loop() {
					b.StopTimer()
					p := newPipelineBench(b, stores[dialect](b), fleets[kind])
					b.StartTimer()
					total += p.round(b)
				}
				b.ReportMetric(float64(b.N*benchAgents)/total.Seconds(), "cards/s")
			})
		}
		b.Run(dialect+"/unsigned/unchanged", func(b *testing.B) {
			b.StopTimer()
			p := newPipelineBench(b, stores[dialect](b), fleets["unsigned"])
			p.round(b)
			b.StartTimer()
			var total time.Duration
			for b.Loop() {
				p.clk.Advance(2 * time.Hour)
				total += p.round(b)
			}
			b.ReportMetric(float64(b.N*benchAgents)/total.Seconds(), "cards/s")
		})
	}
}

// BenchmarkPipelineNoStore is fetch + parse + verify alone over loopback
// (no claims, no writes), with 32 goroutines like the default pool: the
// ceiling the database stages are measured against.
func BenchmarkPipelineNoStore(b *testing.B) {
	for _, kind := range []string{"unsigned", "signed"} {
		b.Run(kind, func(b *testing.B) {
			fleet := agentfleet.Start(b, agentfleet.Options{Hosts: 20, BaseAddr: "127.0.5.1", Signer: verifierSigner})
			behavior := agentfleet.Conditional
			if kind == "signed" {
				behavior = agentfleet.Signed
			}
			var targets []crawler.Target
			for range 1000 {
				targets = append(targets, crawler.Target{CardURL: fleet.Add(agentfleet.Agent{Behavior: behavior}).URL()})
			}
			f := newFetcher(b, fetch.Config{Policy: loopbackPolicy(), Logger: slog.New(slog.DiscardHandler)})
			p := &crawler.Pipeline{Fetcher: f, Verifier: verifier.New(verifier.Config{Fetcher: f})}
			var next atomic.Int64
			b.SetParallelism(16) // 16 × GOMAXPROCS(2) = 32 goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					out := p.Crawl(context.Background(), targets[next.Add(1)%int64(len(targets))])
					if out.Err != nil || out.Parsed == nil {
						b.Error(out.Err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cards/s")
		})
	}
}
