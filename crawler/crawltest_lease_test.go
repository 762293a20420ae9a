package crawler_test

import (
	"context"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// twoStores opens the same database twice, as two replicas would.
func twoStores(t *testing.T, dialect string) (*registry.Store, *registry.Store) {
	t.Helper()
	if dialect == registry.DialectSQLite {
		dir := t.TempDir()
		return registrytest.SQLiteAt(t, dir), registrytest.SQLiteAt(t, dir)
	}
	dsn := registrytest.PostgresURL(t)
	open := func() *registry.Store {
		s, err := registry.Open(context.Background(), registry.OpenOptions{DatabaseURL: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return open(), open()
}

// docs/threats.md B.27: two schedulers (two owners, two connections to ONE
// database) never fetch an agent at the same time, and each agent is
// fetched once per interval.
func TestCrawlTwoSchedulersOneDatabase(t *testing.T) {
	for _, dialect := range []string{registry.DialectSQLite, registry.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 8})
			var agents []*agentfleet.AgentHandle
			for range 48 {
				agents = append(agents, fleet.Add(agentfleet.Agent{Behavior: agentfleet.Conditional}))
			}
			s1, s2 := twoStores(t, dialect)
			clk := newClock()
			a := newStack(t, s1, stackOptions{clk: clk, owner: "replica-a", workers: 4})
			b := newStack(t, s2, stackOptions{clk: clk, owner: "replica-b", workers: 4})
			for _, ag := range agents {
				a.submit(t, ag.URL())
			}
			both := func(n int64) {
				t.Helper()
				a.sched.Kick()
				b.sched.Kick()
				polltest.Until(t, func() string {
					return "the replicas to settle " + itoa(n) + " crawls (settled " + itoa(a.settled()+b.settled()) + ")"
				}, 20*time.Second, func() bool { return a.settled()+b.settled() >= n })
			}
			both(48)
			clk.Advance(2 * time.Hour)
			both(96)
			for _, ag := range agents {
				if ag.Requests() != 2 || ag.MaxInFlight() != 1 {
					t.Errorf("agent %d: %d requests, peak %d in flight; want 2 and 1", ag.ID(), ag.Requests(), ag.MaxInFlight())
				}
			}
			sa, sb := a.sched.Stats(), b.sched.Stats()
			if sa.Claimed+sb.Claimed != 96 || sa.LeaseLost+sb.LeaseLost+sa.RecordErrors+sb.RecordErrors != 0 {
				t.Errorf("replica a %+v, replica b %+v: want 96 claims in all and no lost writes", sa, sb)
			}
			t.Logf("claims: replica a %d, replica b %d", sa.Claimed, sb.Claimed)
		})
	}
}

// docs/threats.md B.27: a crashed worker's lease expires and the agent is
// fetched exactly once afterwards.
func TestCrawlExpiredLeaseRetriedOnce(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		fleet := agentfleet.Start(t, agentfleet.Options{})
		ag := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
		st := newStack(t, store, stackOptions{})
		st.sched.Shutdown(t.Context()) // drive claims by hand first
		id := st.submit(t, ag.URL())
		due, err := st.svc.ClaimDue(t.Context(), "crashed-replica", st.clk.Now(), 2*time.Minute, 10, 2)
		if err != nil || len(due) != 1 {
			t.Fatalf("claim: %v %d", err, len(due))
		}
		again, err := st.svc.ClaimDue(t.Context(), "other", st.clk.Now().Add(time.Minute), 2*time.Minute, 10, 2)
		if err != nil || len(again) != 0 {
			t.Fatalf("a live lease was claimed again: %v %d", err, len(again))
		}
		st2 := newStack(t, store, stackOptions{clk: st.clk, owner: "survivor"})
		st2.later(t, 3*time.Minute, 1)
		if ag.Requests() != 1 {
			t.Errorf("agent fetched %d times after the lease expired, want 1", ag.Requests())
		}
		if a := st2.get(t, id); a.VersionSeq != 1 {
			t.Errorf("version %d after the retry", a.VersionSeq)
		}
		st2.quiet(t)
		if ag.Requests() != 1 {
			t.Errorf("agent fetched %d times, want exactly once", ag.Requests())
		}
	})
}

// docs/threats.md F.64: a crawl that finishes after an admin removed the
// agent changes nothing: no version, no trace, the agent stays removed.
func TestCrawlAfterRemoveChangesNothing(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		m := newMutableAgent(t)
		m.card(agentfleet.GenerateCard(5, m.Origin(), "1.0.0"))
		gate := m.hold()
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.sched.Kick()
		polltest.Until(t, "the crawl to reach the agent", 10*time.Second, func() bool { return m.reqs.Load() == 1 })
		if _, err := st.svc.Act(t.Context(), admin, id, registry.ActionRemove, registry.ActionRequest{Reason: "spam"}); err != nil {
			t.Fatal(err)
		}
		close(gate)
		st.crawl(t, 1)
		if s := st.sched.Stats(); s.LeaseLost != 1 || s.Recorded != 0 {
			t.Errorf("stats %+v, want the one result dropped", s)
		}
		a := st.get(t, id)
		if a.Status != registry.StatusRemoved || a.VersionSeq != 0 || a.Card != nil || a.LastFetchedAt != nil {
			t.Errorf("removed agent after the late crawl: status %s version %d fetched %v", a.Status, a.VersionSeq, a.LastFetchedAt)
		}
		if f, err := st.svc.Fetches(t.Context(), admin, id, 10); err != nil || len(f) != 0 {
			t.Errorf("crawl trace of the removed agent: %v %+v", err, f)
		}
		st.clk.Advance(48 * time.Hour)
		st.quiet(t)
		if m.reqs.Load() != 1 {
			t.Errorf("removed agent fetched again (%d requests)", m.reqs.Load())
		}
	})
}
