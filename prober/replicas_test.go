package prober_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/prober/probertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// waitAllKnown polls (bounded) until every agent has a liveness state.
func waitAllKnown(t *testing.T, svc *registry.Service, ids []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		known := 0
		for _, id := range ids {
			a, err := svc.Get(t.Context(), admin, id)
			if err != nil {
				t.Fatal(err)
			}
			if a.Liveness.State != registry.LivenessUnknown {
				known++
			}
		}
		if known == len(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s only %d of %d agents were probed", known, len(ids))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplicasNeverProbeTwice: two probers, each with its own connection
// pool to one PostgreSQL database (two replicas), run their loops over 40
// agents; within one interval every interface is probed exactly once.
func TestReplicasNeverProbeTwice(t *testing.T) {
	dsn := registrytest.PostgresURL(t)
	fleet := probertest.Start()
	defer fleet.Close()
	f, _ := newFetcher(t, fleet)
	var svcs []*registry.Service
	for range 2 {
		s, err := registry.Open(t.Context(), registry.OpenOptions{DatabaseURL: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		svcs = append(svcs, registry.NewService(s, registry.ServiceConfig{}))
	}
	c := &clock{t: time.Now().Add(time.Hour)} // claims in addAgent see the new agents as due, however long adding 40 takes
	var ids, names []string
	for i := range 40 {
		a, b := fmt.Sprintf("r%da", i), fmt.Sprintf("r%db", i)
		names = append(names, a, b)
		ids = append(ids, addAgent(t, svcs[0], c, fmt.Sprintf("replica-%d", i),
			iface{fleet.Add(a, probertest.JSONRPCv1), "JSONRPC", "1.0"}, iface{fleet.Add(b, probertest.RESTv1), "HTTP+JSON", "1.0"}))
	}
	var ps []*prober.Prober
	for i, svc := range svcs {
		p := newProber(t, svc, f, &clock{t: time.Now()}, func(cfg *prober.Config) {
			cfg.Now = time.Now
			cfg.Interval = time.Hour
			cfg.Tick = 20 * time.Millisecond
			cfg.Workers = 4
			cfg.BatchSize = 3
			cfg.Owner = fmt.Sprintf("replica-%d", i)
		})
		ps = append(ps, p)
	}
	for _, p := range ps {
		p.Start()
	}
	waitAllKnown(t, svcs[1], ids)
	for _, p := range ps {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := p.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
	for _, n := range names {
		if h := fleet.Hits(n); h != 1 {
			t.Errorf("interface %s probed %d times in one interval", n, h)
		}
	}
	total := ps[0].Stats().Recorded + ps[1].Stats().Recorded
	if total != int64(len(ids)) {
		t.Errorf("recorded %d + %d rounds, want %d", ps[0].Stats().Recorded, ps[1].Stats().Recorded, len(ids))
	}
	t.Logf("replica 0 recorded %d rounds, replica 1 %d", ps[0].Stats().Recorded, ps[1].Stats().Recorded)
}

// TestLoopProbesAgainEachInterval: the running loop (1 s interval, the
// smallest) probes an agent again once its interval has passed, and
// Shutdown returns with no lease held.
func TestLoopProbesAgainEachInterval(t *testing.T) {
	fleet := probertest.Start()
	defer fleet.Close()
	f, _ := newFetcher(t, fleet)
	svc := registrytest.Service(registrytest.SQLite(t), nil)
	c := &clock{t: time.Now().Add(time.Second)} // claims in addAgent see the new agents as due
	id := addAgent(t, svc, c, "loop", iface{fleet.Add("loop", probertest.JSONRPCv1), "JSONRPC", "1.0"})
	p := newProber(t, svc, f, c, func(cfg *prober.Config) {
		cfg.Now = time.Now
		cfg.Interval = time.Second
		cfg.Tick = 50 * time.Millisecond
	})
	p.Start()
	deadline := time.Now().Add(20 * time.Second)
	for fleet.Hits("loop") < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("probed %d times in 20 s with a 1 s interval", fleet.Hits("loop"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	hits := fleet.Hits("loop")
	ps, _, err := svc.Probes(t.Context(), admin, id, 100, "")
	if err != nil || len(ps) < 3 || len(ps) > hits {
		t.Fatalf("%d probes recorded (%v) for %d requests", len(ps), err, hits)
	}
	// Due again at once: a new claimer gets it, so no lease was left.
	due, err := svc.ClaimProbes(t.Context(), "other", time.Now().Add(2*time.Second), time.Minute, 10, 2)
	if err != nil || len(due) != 1 {
		t.Fatalf("after shutdown: %v %+v", err, due)
	}
}
