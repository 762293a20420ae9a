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
		if got := agents(publisher("pend.example.com")); !slices.Equal(got, sorted(pub, pending)) {
			t.Fatalf("publisher sees %v", got)
		}
		if got := agents(admin); !slices.Equal(got, sorted(pub, internal, pending)) {
			t.Fatalf("admin sees %v", got)
		}
		// A withdrawal is shown, as "unlisted", so followers can drop the
		// agent; what it was before it was listed is not.
		if _, err := svc.Act(ctx, admin, pub, registry.ActionRemove, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		cs, _, _ := svc.Changes(ctx, anonymous, 0, 1000)
		if len(cs) == 0 || cs[len(cs)-1].Kind != registry.ChangeUnlisted || cs[len(cs)-1].AgentID != pub {
			t.Fatalf("anonymous does not see the removal: %+v", cs)
		}
		for _, c := range cs {
			if c.AgentID == pub && c.Kind == registry.ChangeSubmitted {
				t.Fatalf("anonymous sees the history of an agent before it was listed: %+v", c)
			}
		}
	})
}

// TestChangeFeedNamesOnlyListedAgents (docs/threats.md K.103): each
// caller's feed names only agents its scope admitted before or after a
// change, with a change that took the agent out of its scope shown as
// "unlisted". A pending agent that is removed, or an internal one, never
// shows to anonymous callers, not even by its withdrawal.
func TestChangeFeedNamesOnlyListedAgents(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		submit := func(host string, vis registry.Visibility) string {
			a, err := svc.Submit(ctx, admin, "https://"+host+"/", vis)
			if err != nil {
				t.Fatal(err)
			}
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(host, "1"), registry.TrustUnsigned))
			return a.ID
		}
		act := func(id string, a registry.Action) {
			t.Helper()
			if _, err := svc.Act(ctx, admin, id, a, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
				t.Fatalf("%s: %v", a, err)
			}
		}
		vis := func(id string, v registry.Visibility) {
			t.Helper()
			if _, err := svc.SetVisibility(ctx, admin, id, v); err != nil {
				t.Fatal(err)
			}
		}
		pub := submit("pub.example.com", registry.VisibilityPublic)
		act(pub, registry.ActionApprove)
		internal := submit("int.example.com", registry.VisibilityInternal)
		act(internal, registry.ActionApprove)
		pending := submit("pend.example.com", registry.VisibilityPublic)
		vis(pub, registry.VisibilityInternal)
		vis(pub, registry.VisibilityPublic)
		act(pending, registry.ActionRemove)
		act(internal, registry.ActionRemove)
		act(pub, registry.ActionSuspend)

		names := map[string]string{pub: "pub", internal: "internal", pending: "pending"}
		feed := func(p registry.Principal) []string {
			cs, next, err := svc.Changes(ctx, p, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, c := range cs {
				out = append(out, names[c.AgentID]+" "+c.Kind)
			}
			if len(cs) > 0 && next != cs[len(cs)-1].Seq {
				t.Fatalf("next %d after %+v", next, cs[len(cs)-1])
			}
			return out
		}
		crawled := []string{"changed", "health", "trust"}
		history := func(who string, kinds ...string) []string {
			out := []string{}
			for _, k := range kinds {
				out = append(out, who+" "+k)
			}
			return out
		}
		cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
		for _, tc := range []struct {
			name string
			p    registry.Principal
			want []string
		}{
			{"anonymous", anonymous, cat(history("pub", "approved", "unlisted", "visibility", "unlisted"))},
			{"publisher of another host", publisher("other.example.com"),
				cat(history("pub", "approved", "unlisted", "visibility", "unlisted"))},
			{"reader", reader, cat(history("pub", "approved"), history("internal", "approved"),
				history("pub", "visibility", "visibility"), history("internal", "unlisted"), history("pub", "unlisted"))},
			{"publisher of the pending agent's host", publisher("pend.example.com"), cat(history("pub", "approved"),
				history("pending", slices.Concat([]string{"submitted"}, crawled)...), history("pub", "unlisted", "visibility"),
				history("pending", "unlisted"), history("pub", "unlisted"))},
			{"publisher of the internal agent's host", publisher("int.example.com"), cat(history("pub", "approved"),
				history("internal", slices.Concat([]string{"submitted"}, crawled, []string{"approved"})...),
				history("pub", "unlisted", "visibility"), history("internal", "unlisted"), history("pub", "unlisted"))},
			{"admin", admin, cat(history("pub", slices.Concat([]string{"submitted"}, crawled, []string{"approved"})...),
				history("internal", slices.Concat([]string{"submitted"}, crawled, []string{"approved"})...),
				history("pending", slices.Concat([]string{"submitted"}, crawled)...),
				history("pub", "visibility", "visibility"), history("pending", "removed"), history("internal", "removed"),
				history("pub", "suspended"))},
		} {
			if got := feed(tc.p); !slices.Equal(got, tc.want) {
				t.Errorf("%s sees\n  %q\nwant\n  %q", tc.name, got, tc.want)
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
