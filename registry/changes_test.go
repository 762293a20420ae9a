package registry_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestChangesFiltered(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		mk := func(host string, vis registry.Visibility, st registry.Status) string {
			a, err := svc.Submit(ctx, admin, "https://"+host+"/", vis)
			if err != nil {
				t.Fatal(err)
			}
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(host, "1"), registry.TrustUnsigned))
			setStatus(t, svc, a.ID, st)
			return a.ID
		}
		pub := mk("pub.example.com", registry.VisibilityPublic, registry.StatusApproved)
		internal := mk("int.example.com", registry.VisibilityInternal, registry.StatusApproved)
		pending := mk("pend.example.com", registry.VisibilityPublic, registry.StatusPending)
		agents := func(p registry.Principal) []string {
			cs, _, err := svc.Changes(ctx, p, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range cs {
				if !slices.Contains(out, c.AgentID) {
					out = append(out, c.AgentID)
				}
			}
			slices.Sort(out)
			return out
		}
		if got := agents(anonymous); !slices.Equal(got, sorted(pub)) {
			t.Fatalf("anonymous sees %v", got)
		}
		if got := agents(reader); !slices.Equal(got, sorted(pub, internal)) {
			t.Fatalf("reader sees %v", got)
		}
		if got := agents(publisher("pend.example.com")); !slices.Equal(got, sorted(pub, internal, pending)) {
			t.Fatalf("publisher sees %v", got)
		}
		if got := agents(admin); !slices.Equal(got, sorted(pub, internal, pending)) {
			t.Fatalf("admin sees %v", got)
		}
		// A withdrawal is shown so followers can drop the agent.
		if _, err := svc.Act(ctx, admin, pub, registry.ActionRemove, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		cs, _, _ := svc.Changes(ctx, anonymous, 0, 1000)
		if len(cs) == 0 || cs[len(cs)-1].Kind != registry.ChangeRemoved || cs[len(cs)-1].AgentID != pub {
			t.Fatalf("anonymous does not see the removal: %+v", cs)
		}
		for _, c := range cs {
			if c.AgentID == pub && c.Kind == registry.ChangeSubmitted {
				t.Fatalf("anonymous sees the history of an agent it may no longer list: %+v", c)
			}
		}
	})
}

// TestChangesFollowerMissesNothing: a follower polling "after N" while
// writers commit concurrently sees every seq exactly once, in order (the
// change log is monotonic in commit order; on PostgreSQL this is what the
// advisory lock in addChange buys).
func TestChangesFollowerMissesNothing(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		ctx := t.Context()
		var done atomic.Bool
		var wg sync.WaitGroup
		var werr atomic.Value
		for w := range 6 {
			wg.Go(func() {
				for i := range 20 {
					if _, err := svc.Submit(ctx, anonymous, fmt.Sprintf("https://w%d-%d.example.com/", w, i), ""); err != nil {
						werr.Store(err)
					}
				}
			})
		}
		go func() { wg.Wait(); done.Store(true) }()
		var seen []int64
		after := int64(0)
		deadline := time.Now().Add(30 * time.Second)
		for {
			finished := done.Load()
			cs, next, err := svc.Changes(ctx, admin, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				seen = append(seen, c.Seq)
			}
			after = next
			if finished && len(cs) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("follower did not catch up")
			}
		}
		if err := werr.Load(); err != nil {
			t.Fatal(err)
		}
		all, _, _ := svc.Changes(ctx, admin, 0, 1000)
		if len(all) != 120 || len(seen) != 120 {
			t.Fatalf("%d changes written, follower saw %d", len(all), len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] <= seen[i-1] {
				t.Fatalf("seq %d after %d", seen[i], seen[i-1])
			}
		}
		for i, c := range all {
			if c.Seq != seen[i] {
				t.Fatalf("follower saw %v, log has %d at %d", seen[i], c.Seq, i)
			}
		}
		if latest, err := s.LatestChange(ctx); err != nil || latest != all[len(all)-1].Seq {
			t.Fatalf("LatestChange %d, %v", latest, err)
		}
	})
}

func TestAuditIsAdminOnly(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		a := mustSubmit(t, svc, "https://a.example.com/")
		if _, err := svc.SetVisibility(t.Context(), admin, a.ID, registry.VisibilityInternal); err != nil {
			t.Fatal(err)
		}
		// Setting the same visibility again writes nothing.
		if _, err := svc.SetVisibility(t.Context(), admin, a.ID, registry.VisibilityInternal); err != nil {
			t.Fatal(err)
		}
		for _, p := range []registry.Principal{anonymous, reader, publisher("a.example.com")} {
			if _, _, err := svc.Audit(t.Context(), p, 0, 10); !isErr(err, denied(p)) {
				t.Errorf("%q: %v", p.Role, err)
			}
		}
		es, next, err := svc.Audit(t.Context(), admin, 0, 1)
		if err != nil || len(es) != 1 || es[0].Action != "submit" {
			t.Fatalf("%+v, %v", es, err)
		}
		es, _, err = svc.Audit(t.Context(), admin, next, 10)
		if err != nil || len(es) != 1 || es[0].Action != "set-visibility" || es[0].Detail["visibility"] != "internal" || es[0].ActorName != "root" {
			t.Fatalf("%+v, %v", es, err)
		}
		kinds, _ := changeKinds(t, svc, 0)
		if !slices.Equal(kinds, []string{"submitted", "visibility"}) {
			t.Fatalf("changes %v", kinds)
		}
	})
}
