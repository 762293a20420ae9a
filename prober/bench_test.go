package prober_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/prober/probertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// benchAgents is the fleet size of the pipeline benchmark: enough that a
// round is many claim and record batches, small enough to set up in
// seconds.
const benchAgents = 1000

// BenchmarkProbePipeline measures the whole probe pipeline on a loopback
// fleet: claim due agents, probe each one's JSON-RPC interface (a real
// HTTP round trip through the crawler's fetcher), record the rounds. One
// iteration advances the clock one interval and probes every agent once;
// probes/s is the throughput (docs/benchmarks.md).
func BenchmarkProbePipeline(b *testing.B) {
	for _, tc := range []struct {
		name  string
		store func(testing.TB) *registry.Store
	}{
		{"sqlite", registrytest.SQLite},
		{"postgres", registrytest.Postgres},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fleet := probertest.Start()
			defer fleet.Close()
			f, _ := newFetcher(b, fleet)
			c := newClock()
			svc := registrytest.Service(tc.store(b), c.Now)
			for i := range benchAgents {
				addAgent(b, svc, c, fmt.Sprintf("bench-%d", i), iface{fleet.Add(fmt.Sprintf("b%d", i), probertest.JSONRPCv1), "JSONRPC", "1.0"})
			}
			p := newProber(b, svc, f, c, func(cfg *prober.Config) { cfg.Workers = 32 })
			total := 0
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			for b.Loop() {
				c.Advance(16 * time.Minute)
				for {
					n, err := p.Round(b.Context())
					if err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						break
					}
					total += n
				}
			}
			elapsed := time.Since(start)
			if total%benchAgents != 0 {
				b.Fatalf("%d rounds recorded: not whole passes over %d agents", total, benchAgents)
			}
			b.ReportMetric(float64(total)/elapsed.Seconds(), "probes/s")
			// CPU of the whole process: the prober, the database and the
			// fake agents answering on loopback.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(total), "cpu-ms/probe")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
