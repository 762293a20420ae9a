package registry_test

import (
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// docs/threats.md K.99: a claimed probe says whether a curator approved
// the agent (an admin's approve or restore) or the --auto-approve policy
// did; only the former lets the prober reach off-domain interfaces.
func TestClaimProbesCuratorApproved(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, AutoApprove: registry.AutoApproveVerified})
		curated := approvedAgent(t, svc, c, "https://curated.example.com/agent.json")
		auto := mustSubmit(t, svc, "https://auto.example.com/agent.json")
		crawl(t, svc, c, auto.ID, okResult(t, c.Now(), cardJSON("Auto", "1"), registry.TrustVerified, "thumb"))
		if a, err := svc.Get(t.Context(), admin, auto.ID); err != nil || a.Status != registry.StatusApproved {
			t.Fatalf("the policy did not approve: %v %+v", err, a)
		}
		restored := mustSubmit(t, svc, "https://restored.example.com/agent.json")
		crawl(t, svc, c, restored.ID, okResult(t, c.Now(), cardJSON("Restored", "1"), registry.TrustVerified, "thumb"))
		for _, a := range []registry.Action{registry.ActionSuspend, registry.ActionRestore} {
			if _, err := svc.Act(t.Context(), admin, restored.ID, a, registry.ActionRequest{}); err != nil {
				t.Fatal(a, err)
			}
		}
		due, err := svc.ClaimProbes(t.Context(), "p1", c.Now(), time.Minute, 10, 10)
		if err != nil || len(due) != 3 {
			t.Fatalf("claimed %d, %v", len(due), err)
		}
		want := map[string]bool{curated: true, auto.ID: false, restored.ID: true}
		for _, d := range due {
			if d.CuratorApproved != want[d.ID] {
				t.Errorf("agent %s: CuratorApproved %v, want %v", d.ID, d.CuratorApproved, want[d.ID])
			}
		}
	})
}

// docs/threats.md K.98: the prober asks between interfaces whether it
// still holds the lease; turning probing off answers no at once.
func TestProbeLeaseHeld(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		id := approvedAgent(t, svc, c, "https://a.example.com/agent.json")
		if held, err := svc.ProbeLeaseHeld(t.Context(), "p1", id, c.Now()); err != nil || held {
			t.Fatalf("before the claim: %v %v", held, err)
		}
		if due, err := svc.ClaimProbes(t.Context(), "p1", c.Now(), time.Minute, 10, 10); err != nil || len(due) != 1 {
			t.Fatalf("claim: %d %v", len(due), err)
		}
		for _, tc := range []struct {
			owner string
			at    time.Duration
			want  bool
		}{{"p1", 0, true}, {"p2", 0, false}, {"p1", time.Minute, false}} {
			if held, err := svc.ProbeLeaseHeld(t.Context(), tc.owner, id, c.Now().Add(tc.at)); err != nil || held != tc.want {
				t.Errorf("%s at +%v: %v %v, want %v", tc.owner, tc.at, held, err, tc.want)
			}
		}
		if _, err := svc.SetProbing(t.Context(), admin, id, false); err != nil {
			t.Fatal(err)
		}
		if held, err := svc.ProbeLeaseHeld(t.Context(), "p1", id, c.Now()); err != nil || held {
			t.Fatalf("after probing off: %v %v", held, err)
		}
	})
}

// A round that could not probe every interface (its deadline, a busy
// host) keeps the last verdict of the ones it left; an interface neither
// probed nor left is dropped, as before.
func TestProbeRoundUnfinishedKeepsVerdicts(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		id := approvedAgent(t, svc, c, "https://a.example.com/agent.json")
		probeOnce(t, svc, c, round(id, c.Now(), registry.OutcomeAnswering, registry.OutcomeUnreachable, registry.OutcomeAnswering))
		c.Advance(15 * time.Minute)
		r := round(id, c.Now(), registry.OutcomeAnswering)
		r.Unfinished = []registry.ProbeTarget{{URL: "https://a.example.com/a2a/1", Binding: "JSONRPC", ProtocolVersion: "1.0"}}
		probeOnce(t, svc, c, r)
		a, err := svc.Get(t.Context(), admin, id)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, i := range a.Liveness.Interfaces {
			got[i.URL] = i.Outcome
		}
		want := map[string]string{"https://a.example.com/a2a/0": registry.OutcomeAnswering, "https://a.example.com/a2a/1": registry.OutcomeUnreachable}
		if len(got) != len(want) || got["https://a.example.com/a2a/0"] != want["https://a.example.com/a2a/0"] ||
			got["https://a.example.com/a2a/1"] != want["https://a.example.com/a2a/1"] {
			t.Fatalf("interfaces %v, want %v", got, want)
		}
		if a.Liveness.State != registry.LivenessDegraded {
			t.Fatalf("state %s, want degraded (the kept verdict counts)", a.Liveness.State)
		}
	})
}
