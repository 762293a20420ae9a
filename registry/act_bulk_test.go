package registry_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// ActMany applies one action to many agents in one transaction, each at
// the version the caller saw, answering per item: the items Act would
// refuse are refused alone, every success is audited and in the change log
// as with Act.
func TestActMany(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		var ids []string
		for _, h := range []string{"a", "b", "c", "d"} {
			a := mustSubmit(t, svc, "https://"+h+".example.com/")
			ids = append(ids, a.ID)
		}
		for _, id := range ids[:3] {
			crawl(t, svc, c, id, okResult(t, c.Now(), cardJSON("A", "1"), registry.TrustUnsigned))
		}
		_, before := changeKinds(t, svc, 0)
		items := []registry.BulkItem{
			{ID: ids[0], VersionSeq: seq(1)},
			{ID: ids[1], VersionSeq: seq(2)}, // the caller saw another version
			{ID: ids[2], VersionSeq: seq(1)},
			{ID: ids[3], VersionSeq: seq(1)}, // nothing fetched yet
			{ID: "no-such-agent", VersionSeq: seq(1)},
			{ID: ids[0]}, // approve needs the version
		}
		res, err := svc.ActMany(ctx, admin, registry.ActionApprove, items, "imported")
		if err != nil || len(res) != len(items) {
			t.Fatalf("ActMany: %v, %v", res, err)
		}
		var vc *registry.VersionConflictError
		switch {
		case res[0].Err != nil || res[0].Status != registry.StatusApproved || res[0].VersionSeq != 1:
			t.Fatalf("item 0: %+v", res[0])
		case !errors.As(res[1].Err, &vc) || vc.CurrentVersionSeq != 1:
			t.Fatalf("item 1: %+v", res[1])
		case res[2].Err != nil || res[2].Status != registry.StatusApproved:
			t.Fatalf("item 2: %+v", res[2])
		case !errors.As(res[3].Err, &vc) || vc.CurrentVersionSeq != 0:
			t.Fatalf("item 3: %+v", res[3])
		case !errors.Is(res[4].Err, registry.ErrNotFound):
			t.Fatalf("item 4: %+v", res[4])
		case !errors.Is(res[5].Err, registry.ErrValidation):
			t.Fatalf("item 5: %+v", res[5])
		}
		kinds, _ := changeKinds(t, svc, before)
		if len(kinds) != 2 || kinds[0] != registry.ChangeApproved || kinds[1] != registry.ChangeApproved {
			t.Fatalf("changes %v", kinds)
		}
		page, err := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{"approve"}})
		if err != nil || len(page.Entries) != 2 || page.Entries[0].Reason != "imported" || page.Entries[0].ActorName != admin.Name {
			t.Fatalf("audit %+v, %v", page, err)
		}
		if got, _ := svc.Get(ctx, admin, ids[1]); got.Status != registry.StatusPending {
			t.Fatalf("the conflicting item changed: %+v", got)
		}
		// Suspend without versions; a repeat in effect is a success with
		// no second entry.
		res, err = svc.ActMany(ctx, admin, registry.ActionSuspend, []registry.BulkItem{{ID: ids[0]}, {ID: ids[2]}, {ID: ids[1]}}, "")
		if err != nil || res[0].Status != registry.StatusSuspended || res[1].Status != registry.StatusSuspended ||
			!errors.Is(res[2].Err, registry.ErrInvalidTransition) {
			t.Fatalf("suspend: %+v, %v", res, err)
		}
		if res, err = svc.ActMany(ctx, admin, registry.ActionSuspend, []registry.BulkItem{{ID: ids[0]}}, ""); err != nil || res[0].Err != nil {
			t.Fatalf("repeat: %+v, %v", res, err)
		}
		if page, _ := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{"suspend"}}); len(page.Entries) != 2 {
			t.Fatalf("%d suspend entries", len(page.Entries))
		}
		// Bounds and roles.
		if _, err := svc.ActMany(ctx, admin, registry.ActionSuspend, nil, ""); !errors.Is(err, registry.ErrValidation) {
			t.Fatalf("no items: %v", err)
		}
		if _, err := svc.ActMany(ctx, admin, registry.ActionSuspend, make([]registry.BulkItem, registry.MaxBulk+1), ""); !errors.Is(err, registry.ErrValidation) {
			t.Fatalf("too many items: %v", err)
		}
		if _, err := svc.ActMany(ctx, registry.Principal{Role: registry.RoleReader, TokenID: "r"}, registry.ActionSuspend, items[:1], ""); !errors.Is(err, registry.ErrForbidden) {
			t.Fatalf("reader: %v", err)
		}
	})
}

// Two bulk actions over the same agents in opposite orders, at once, on
// PostgreSQL: each locks its rows in id order before writing, so neither
// waits for a row while holding the change-log lock the other waits for
// (a deadlock PostgreSQL would break by failing one of them).
func TestActManyConcurrentOrders(t *testing.T) {
	s := registrytest.Postgres(t)
	c := newClock()
	svc := newService(s, c)
	var ids []string
	for i := range 60 {
		ids = append(ids, mustSubmit(t, svc, fmt.Sprintf("https://h%d.example.com/", i)).ID)
	}
	for round := range 5 {
		forward := make([]registry.BulkItem, len(ids))
		backward := make([]registry.BulkItem, len(ids))
		for i, id := range ids {
			forward[i] = registry.BulkItem{ID: id}
			backward[len(ids)-1-i] = registry.BulkItem{ID: id}
		}
		a, b := registry.ActionSuspend, registry.ActionRestore
		if round%2 == 1 {
			a, b = b, a
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { _, errs[0] = svc.ActMany(t.Context(), admin, a, forward, "") })
		wg.Go(func() { _, errs[1] = svc.ActMany(t.Context(), admin, b, backward, "") })
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// An agent named twice in one ActMany is acted on in item order, the
// second item starting from what the first left: approve then suspend
// both happen, and a second approve is a repeat in effect with no second
// audit entry.
func TestActManyRepeatsAnItem(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://twice.example.com/")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("T", "1"), registry.TrustUnsigned))
		items := []registry.BulkItem{{ID: a.ID, VersionSeq: seq(1)}, {ID: a.ID, VersionSeq: seq(1)}}
		res, err := svc.ActMany(ctx, admin, registry.ActionApprove, items, "")
		if err != nil || res[0].Err != nil || res[1].Err != nil || res[1].Status != registry.StatusApproved {
			t.Fatalf("approve twice: %+v, %v", res, err)
		}
		if page, _ := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{"approve"}}); len(page.Entries) != 1 {
			t.Fatalf("%d approve entries", len(page.Entries))
		}
		res, err = svc.ActMany(ctx, admin, registry.ActionSuspend, []registry.BulkItem{{ID: a.ID}, {ID: a.ID}}, "")
		if err != nil || res[0].Status != registry.StatusSuspended || res[1].Err != nil || res[1].Status != registry.StatusSuspended {
			t.Fatalf("suspend twice: %+v, %v", res, err)
		}
		if page, _ := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{"suspend"}}); len(page.Entries) != 1 {
			t.Fatalf("%d suspend entries", len(page.Entries))
		}
		if got, _ := svc.Get(ctx, admin, a.ID); got.Status != registry.StatusSuspended {
			t.Fatalf("status %s", got.Status)
		}
	})
}
