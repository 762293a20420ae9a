package registry_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// TestCountProbes: the prober's pace and the probe backlog count approved
// agents only, never-probed ones as due, and a probed one as due again
// once its next probe time passes; on SQLite the count reads
// agents_probe_next alone (docs/liveness.md "Pacing").
func TestCountProbes(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		want := func(probeable, never, due int64) {
			t.Helper()
			got, err := svc.CountProbes(t.Context(), c.Now())
			if err != nil {
				t.Fatal(err)
			}
			if w := (registry.ProbeCounts{Probeable: probeable, NeverProbed: never, Due: due}); got != w {
				t.Fatalf("CountProbes = %+v, want %+v", got, w)
			}
		}
		want(0, 0, 0)
		a := approvedAgent(t, svc, c, "https://count-a.example.com/")
		approvedAgent(t, svc, c, "https://count-b.example.com/")
		mustSubmit(t, svc, "https://count-pending.example.com/") // pending: not probed
		want(2, 2, 2)

		probeOnce(t, svc, c, round(a, c.Now(), registry.OutcomeAnswering)) // next probe in 15 minutes
		want(2, 1, 1)
		c.Advance(15 * time.Minute)
		want(2, 1, 2)

		if s.Dialect() == registry.DialectSQLite {
			if p := plan(t, s, registry.ProbeCountsSQL, c.Now()); !strings.Contains(p, "USING COVERING INDEX agents_probe_next") {
				t.Fatalf("plan %q, want the covering agents_probe_next", p)
			}
		}
	})
}

// The probe claim's count of live leases per host reads only live leases
// through the host indexes (migration 00230), never every agent of the
// hosts; probe and crawl leases of one host add up.
func TestProbeHostLoadPlanAndCounts(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		for i := range 3 {
			approvedAgent(t, svc, c, fmt.Sprintf("https://load.example.com/a%d/", i))
		}
		// Two probe leases on the host, then a crawl lease on the third.
		probes, err := svc.ClaimProbes(t.Context(), "p", c.Now(), time.Minute, 2, 5)
		if err != nil || len(probes) != 2 {
			t.Fatalf("probe claim: %d, %v", len(probes), err)
		}
		c.Advance(2 * time.Hour) // every agent due for a crawl again
		crawls, err := svc.ClaimDue(t.Context(), "c", c.Now(), time.Hour, 1, 5)
		if err != nil || len(crawls) != 1 {
			t.Fatalf("crawl claim: %d, %v", len(crawls), err)
		}
		// The probe leases ran out with the clock; claim again: the host
		// holds the crawl lease, so at most perHost−1 more probe leases.
		probes, err = svc.ClaimProbes(t.Context(), "p", c.Now(), time.Minute, 5, 2)
		if err != nil || len(probes) != 1 {
			t.Fatalf("probe claim beside a crawl lease, per host 2: %d, %v", len(probes), err)
		}
		if s.Dialect() == registry.DialectSQLite {
			p := plan(t, s, registry.ProbeHostLoadSQL, []string{"load.example.com"}, c.Now(), []string{"load.example.com"}, c.Now())
			if !strings.Contains(p, "INDEX agents_host_probe_lease") || !strings.Contains(p, "INDEX agents_host_lease") {
				t.Fatalf("plan %q, want both host lease indexes", p)
			}
		}
	})
}
