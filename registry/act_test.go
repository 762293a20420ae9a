package registry_test

import (
	"errors"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// setStatus drives a fetched agent (version 1 current) to st through the
// allowed transitions.
func setStatus(t *testing.T, svc *registry.Service, id string, st registry.Status) {
	t.Helper()
	steps := map[registry.Status][]registry.Action{
		registry.StatusPending:   nil,
		registry.StatusApproved:  {registry.ActionApprove},
		registry.StatusRejected:  {registry.ActionReject},
		registry.StatusSuspended: {registry.ActionApprove, registry.ActionSuspend},
		registry.StatusRemoved:   {registry.ActionRemove},
	}
	for _, a := range steps[st] {
		if _, err := svc.Act(t.Context(), admin, id, a, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
}

// TestTransitions is docs/api.md "Curation and visibility"'s table: every action from every
// status, with repeats of an action in effect answering the agent and
// writing no audit entry (docs/threats.md I.80).
func TestTransitions(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		type outcome struct {
			to   registry.Status // "" when refused
			noop bool
		}
		P, A, R, S, X := registry.StatusPending, registry.StatusApproved, registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved
		table := map[registry.Action]map[registry.Status]outcome{
			registry.ActionApprove: {P: {to: A}, A: {to: A, noop: true}, R: {}, S: {}, X: {}},
			registry.ActionReject:  {P: {to: R}, A: {}, R: {to: R, noop: true}, S: {}, X: {}},
			registry.ActionSuspend: {P: {}, A: {to: S}, R: {}, S: {to: S, noop: true}, X: {}},
			registry.ActionRestore: {P: {to: P, noop: true}, A: {to: A, noop: true}, R: {to: P}, S: {to: A}, X: {to: P}},
			registry.ActionRemove:  {P: {to: X}, A: {to: X}, R: {to: X}, S: {to: X}, X: {to: X, noop: true}},
		}
		n := 0
		for action, row := range table {
			for from, want := range row {
				n++
				a := mustSubmit(t, svc, "https://t"+string(rune('a'+n%26))+itoa(n)+".example.com/")
				crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("T", "1"), registry.TrustUnsigned))
				setStatus(t, svc, a.ID, from)
				before, _, _ := svc.Audit(t.Context(), admin, 0, 1000)
				got, err := svc.Act(t.Context(), admin, a.ID, action, registry.ActionRequest{Reason: "r", VersionSeq: seq(1)})
				after, _, _ := svc.Audit(t.Context(), admin, 0, 1000)
				switch {
				case want.to == "":
					if !errors.Is(err, registry.ErrInvalidTransition) || len(after) != len(before) {
						t.Errorf("%s from %s: err %v, audit %d→%d; want ErrInvalidTransition", action, from, err, len(before), len(after))
					}
				case err != nil || got.Status != want.to:
					t.Errorf("%s from %s: %v, %v; want %s", action, from, got, err, want.to)
				case want.noop && len(after) != len(before):
					t.Errorf("%s from %s repeated: audit grew %d→%d", action, from, len(before), len(after))
				case !want.noop && (len(after) != len(before)+1 || after[len(after)-1].Action != string(action) ||
					after[len(after)-1].Reason != "r" || after[len(after)-1].ActorName != "root" || after[len(after)-1].ActorID != "t-admin"):
					t.Errorf("%s from %s: audit %+v", action, from, after[len(before):])
				}
			}
		}
	})
}

func TestActIsAdminOnly(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		a := mustSubmit(t, svc, "https://a.example.com/")
		// docs/threats.md I.79: a publisher, even of this host, never curates;
		// it may only withdraw (remove) its own hosts' agents (docs/claims.md).
		for _, p := range []registry.Principal{anonymous, reader, publisher("a.example.com"), publisher("b.example.com")} {
			for _, act := range []registry.Action{registry.ActionApprove, registry.ActionRemove, registry.ActionReject} {
				if act == registry.ActionRemove && p.Role == registry.RolePublisher && p.Hosts[0] == "a.example.com" {
					continue
				}
				if _, err := svc.Act(t.Context(), p, a.ID, act, registry.ActionRequest{VersionSeq: seq(0)}); !errors.Is(err, denied(p)) {
					t.Errorf("%q %v %s: %v", p.Role, p.Hosts, act, err)
				}
			}
		}
		if got, err := svc.Act(t.Context(), publisher("a.example.com"), a.ID, registry.ActionRemove, registry.ActionRequest{Reason: "gone"}); err != nil || got.Status != registry.StatusRemoved {
			t.Fatalf("the host's publisher withdraws: %+v, %v", got, err)
		}
		if _, err := svc.Act(t.Context(), admin, "no-such-id", registry.ActionRemove, registry.ActionRequest{}); !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("unknown id: %v", err)
		}
		var ve *registry.ValidationError
		if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionApprove, registry.ActionRequest{}); !errors.As(err, &ve) || ve.Errors[0].Pointer != "/versionSeq" {
			t.Fatalf("approve without versionSeq: %v", err)
		}
	})
}

// TestApproveStaleVersion (docs/threats.md F.65): approving anything but the
// version under review is a conflict naming it, also before any fetch.
func TestApproveStaleVersion(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		a := mustSubmit(t, svc, "https://a.example.com/")
		var vc *registry.VersionConflictError
		if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(0)}); !errors.As(err, &vc) || vc.CurrentVersionSeq != 0 || !errors.Is(err, registry.ErrVersionConflict) {
			t.Fatalf("approve before fetch: %v", err)
		}
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "3"), registry.TrustUnsigned))
		makeDue(c)
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("A", "4"), registry.TrustUnsigned))
		if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); !errors.As(err, &vc) || vc.CurrentVersionSeq != 2 {
			t.Fatalf("approve stale: %v", err)
		}
		got, _ := svc.Get(t.Context(), admin, a.ID)
		if got.Status != registry.StatusPending {
			t.Fatalf("stale approve changed status to %s", got.Status)
		}
		got, err := svc.Act(t.Context(), admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(2)})
		if err != nil || got.Status != registry.StatusApproved || got.VersionSeq != 2 {
			t.Fatalf("approve current: %+v, %v", got, err)
		}
	})
}
