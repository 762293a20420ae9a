package registry_test

import (
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
