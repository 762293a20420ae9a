package registry_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// submitBacklog submits n agents on host, one second apart, so they are
// due in submission order; it returns their ids in that order.
func submitBacklog(t *testing.T, svc *registry.Service, c *clock, host string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		ids = append(ids, mustSubmit(t, svc, fmt.Sprintf("https://%s/a%03d.json", host, i)).ID)
		c.Advance(time.Second)
	}
	return ids
}

// The bounded claim under concurrency: a busy host's backlog (more than a
// claim's first chunk) is due before twenty small hosts; eight claimers
// with a small limit never get one agent twice, and together they get
// exactly what the per-host cap allows: two of the busy host, two of each
// small host (leases are never given back here).
func TestClaimDueBoundedExclusive(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		submitBacklog(t, svc, c, "busy.example.com", 120)
		for h := range 20 {
			submitBacklog(t, svc, c, fmt.Sprintf("h%02d.example.com", h), 3)
		}
		var (
			mu     sync.Mutex
			owner  = map[string]string{}
			hosts  = map[string]int{}
			dups   []string
			errs   []error
			claims sync.WaitGroup
		)
		for w := range 8 {
			claims.Go(func() {
				name := fmt.Sprintf("w%d", w)
				for range 30 {
					got, err := svc.ClaimDue(t.Context(), name, c.Now(), time.Minute, 3, 2)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					for _, d := range got {
						if prev, ok := owner[d.ID]; ok {
							dups = append(dups, d.ID+" by "+prev+" and "+name)
						}
						owner[d.ID] = name
						hosts[d.Host]++
					}
					mu.Unlock()
					if len(got) == 0 {
						return
					}
				}
			})
		}
		claims.Wait()
		if len(errs) > 0 || len(dups) > 0 || len(owner) != 2+20*2 {
			t.Fatalf("errors %v, double claims %v, claimed %d, want 42", errs, dups, len(owner))
		}
		for h, n := range hosts {
			if n != 2 {
				t.Errorf("host %s: %d claimed, cap 2", h, n)
			}
		}
	})
}

// No starvation either way: a host at its cap is skipped for one claim,
// not forever (its agents are taken in due order as its leases end), and
// the agents of other hosts behind its backlog, further than a claim's
// first chunk, are still reached while it is at its cap.
func TestClaimDueNoStarvation(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		busy := submitBacklog(t, svc, c, "busy.example.com", 100)
		other := submitBacklog(t, svc, c, "other.example.com", 2)
		claim := func(limit int) []string {
			t.Helper()
			got, err := svc.ClaimDue(ctx, "w1", c.Now(), time.Hour, limit, 2)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, d := range got {
				ids = append(ids, d.ID)
			}
			return ids
		}
		// limit 2: the first chunk is 64 rows, all of the busy host.
		if got := claim(2); !slices.Equal(got, busy[:2]) {
			t.Fatalf("first claim %v, want the two oldest busy agents", got)
		}
		if got := claim(2); !slices.Equal(got, other) {
			t.Fatalf("second claim %v, want the other host's agents behind the busy backlog", got)
		}
		if got := claim(2); len(got) != 0 {
			t.Fatalf("third claim %v: both hosts are at their cap", got)
		}
		// Each recorded crawl frees a slot of the busy host: its agents
		// come in due order, one round after another.
		next := 2
		for round := range 5 {
			for _, id := range busy[next-2 : next] {
				if err := svc.RecordFetch(ctx, "w1", id, errResult(c.Now(), "dns", 0)); err != nil {
					t.Fatal(err)
				}
			}
			if got := claim(10); !slices.Equal(got, busy[next:next+2]) {
				t.Fatalf("round %d: claimed %v, want busy agents %d and %d", round, got, next, next+1)
			}
			next += 2
		}
	})
}
