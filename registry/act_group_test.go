package registry_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// TestActGroupCommit: Act calls that queue while another transaction runs
// commit together, each with the rules, audit entry and change-log rows of
// Act alone and in arrival order; a refused call is answered alone, and a
// call whose context ended while it queued writes nothing. Only SQLite's
// calls queue (act_group.go).
func TestActGroupCommit(t *testing.T) {
	func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		var ids []string
		for i := range 5 {
			a := mustSubmit(t, svc, fmt.Sprintf("https://g%d.example.com/", i))
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("G", "1"), registry.TrustUnsigned))
			ids = append(ids, a.ID)
		}
		_, before := changeKinds(t, svc, 0)
		gone, cancel := context.WithCancel(ctx)
		type call struct {
			ctx context.Context
			id  string
			a   registry.Action
			v   *int64
		}
		calls := []call{
			{ctx, ids[0], registry.ActionApprove, seq(1)},
			{ctx, ids[1], registry.ActionApprove, seq(2)}, // another version than the one under review
			{ctx, ids[0], registry.ActionSuspend, nil},    // after the approval queued before it
			{gone, ids[2], registry.ActionApprove, seq(1)},
			{ctx, ids[3], registry.ActionApprove, seq(1)},
			{ctx, "no-such-agent", registry.ActionApprove, seq(1)},
		}
		type outcome struct {
			a   *registry.Agent
			err error
		}
		out := make([]chan outcome, len(calls))
		release := svc.HoldActs()
		for i, cl := range calls {
			out[i] = make(chan outcome, 1)
			go func() {
				a, err := svc.Act(cl.ctx, admin, cl.id, cl.a, registry.ActionRequest{VersionSeq: cl.v, Reason: "r"})
				out[i] <- outcome{a, err}
			}()
			waitQueued(t, svc, i+1)
		}
		cancel()
		release()
		got := make([]outcome, len(calls))
		for i := range out {
			got[i] = <-out[i]
		}
		var vc *registry.VersionConflictError
		switch {
		case got[0].err != nil || got[0].a.Status != registry.StatusApproved:
			t.Fatalf("approve: %+v, %v", got[0].a, got[0].err)
		case !errors.As(got[1].err, &vc) || vc.CurrentVersionSeq != 1:
			t.Fatalf("stale approve: %v", got[1].err)
		case got[2].err != nil || got[2].a.Status != registry.StatusSuspended:
			t.Fatalf("suspend after approve: %+v, %v", got[2].a, got[2].err)
		case !errors.Is(got[3].err, context.Canceled):
			t.Fatalf("cancelled call: %v", got[3].err)
		case got[4].err != nil || got[4].a.Status != registry.StatusApproved || got[4].a.VersionSeq != 1:
			t.Fatalf("approve: %+v, %v", got[4].a, got[4].err)
		case !errors.Is(got[5].err, registry.ErrNotFound):
			t.Fatalf("unknown agent: %v", got[5].err)
		}
		for i, want := range []registry.Status{registry.StatusSuspended, registry.StatusPending, registry.StatusPending, registry.StatusApproved, registry.StatusPending} {
			if a, err := svc.Get(ctx, admin, ids[i]); err != nil || a.Status != want {
				t.Fatalf("agent %d: %+v, %v; want %s", i, a, err, want)
			}
		}
		kinds, _ := changeKinds(t, svc, before)
		want := []string{registry.ChangeApproved, registry.ChangeSuspended, registry.ChangeApproved}
		if fmt.Sprint(kinds) != fmt.Sprint(want) {
			t.Fatalf("changes %v, want %v", kinds, want)
		}
		page, err := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{"approve", "suspend"}})
		if err != nil || len(page.Entries) != 3 {
			t.Fatalf("audit %+v, %v", page, err)
		}
		// In arrival order: the first approval, the suspension, the second.
		slices.SortFunc(page.Entries, func(a, b registry.AuditEntry) int { return cmp.Compare(a.Seq, b.Seq) })
		for i, w := range []struct{ action, id string }{{"approve", ids[0]}, {"suspend", ids[0]}, {"approve", ids[3]}} {
			if e := page.Entries[i]; e.Action != w.action || e.AgentID != w.id || e.Reason != "r" {
				t.Fatalf("audit entry %d: %+v, want %s %s", i, e, w.action, w.id)
			}
		}
	}(t, registrytest.SQLite(t))
}

// waitQueued waits until n Act calls queue.
func waitQueued(t *testing.T, svc *registry.Service, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for svc.QueuedActs() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", svc.QueuedActs(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestActGroupFailureIsolated: when a shared transaction fails on one
// call's write (here a trigger refuses one agent's update), nothing of it
// stays and every call runs again alone: the others commit, with one
// audit entry each, and only that call answers the failure.
func TestActGroupFailureIsolated(t *testing.T) {
	s := registrytest.SQLite(t)
	c := newClock()
	svc := newService(s, c)
	ctx := t.Context()
	var ids []string
	for i := range 3 {
		a := mustSubmit(t, svc, fmt.Sprintf("https://f%d.example.com/", i))
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("F", "1"), registry.TrustUnsigned))
		ids = append(ids, a.ID)
	}
	trigger := fmt.Sprintf(`CREATE TRIGGER fail_one BEFORE UPDATE ON agents WHEN OLD.id = '%s'
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`, ids[1])
	if err := s.WriteDB().Exec(trigger).Error; err != nil {
		t.Fatal(err)
	}
	_, before := changeKinds(t, svc, 0)
	errs := make([]chan error, len(ids))
	release := svc.HoldActs()
	for i, id := range ids {
		errs[i] = make(chan error, 1)
		go func() {
			_, err := svc.Act(ctx, admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)})
			errs[i] <- err
		}()
		waitQueued(t, svc, i+1)
	}
	release()
	for i := range ids {
		err := <-errs[i]
		if (i == 1) != (err != nil) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	for i, want := range []registry.Status{registry.StatusApproved, registry.StatusPending, registry.StatusApproved} {
		if a, err := svc.Get(ctx, admin, ids[i]); err != nil || a.Status != want {
			t.Fatalf("agent %d: %+v, %v; want %s", i, a, err, want)
		}
	}
	if kinds, _ := changeKinds(t, svc, before); len(kinds) != 2 {
		t.Fatalf("changes %v", kinds)
	}
	page, err := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{"approve"}})
	if err != nil || len(page.Entries) != 2 {
		t.Fatalf("audit %+v, %v", page, err)
	}
}
