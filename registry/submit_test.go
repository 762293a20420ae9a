package registry_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestSubmitCreatesPendingAgent(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		a, err := svc.Submit(t.Context(), anonymous, "HTTPS://Agent.Example.COM/", "")
		if err != nil {
			t.Fatal(err)
		}
		if len(a.ID) < 16 || a.CardURL != "https://agent.example.com"+wk || a.Host != "agent.example.com" ||
			a.Status != registry.StatusPending || a.Health != registry.HealthUnknown || a.Trust != registry.TrustUnknown ||
			a.Visibility != registry.VisibilityPublic || a.VersionSeq != 0 || a.Card != nil || a.LastError != nil ||
			a.NextFetchAt == nil || !a.NextFetchAt.Equal(c.Now()) || !a.CreatedAt.Equal(c.Now()) {
			t.Fatalf("record: %+v", a)
		}
		changes, next, err := svc.Changes(t.Context(), admin, 0, 10)
		if err != nil || len(changes) != 1 || changes[0].Kind != registry.ChangeSubmitted || changes[0].AgentID != a.ID || next != changes[0].Seq {
			t.Fatalf("changes %+v next %d err %v", changes, next, err)
		}
		audit, _, err := svc.Audit(t.Context(), admin, 0, 10)
		if err != nil || len(audit) != 1 || audit[0].Action != "submit" || audit[0].AgentID != a.ID || audit[0].ActorName != "anonymous" {
			t.Fatalf("audit %+v err %v", audit, err)
		}
		// Whoever holds the id can follow the submission (docs/api.md "Agent identity").
		got, err := svc.Get(t.Context(), anonymous, a.ID)
		if err != nil || got.ID != a.ID || got.Status != registry.StatusPending {
			t.Fatalf("Get: %+v, %v", got, err)
		}
		// The record Submit answers with (which reads no probes for the
		// new row) is the one Get reads.
		if sub, get := mustJSON(t, a), mustJSON(t, got); sub != get {
			t.Fatalf("Submit answered\n%s\nGet reads\n%s", sub, get)
		}
		// Internal visibility is for admins only.
		if _, err := svc.Submit(t.Context(), reader, "https://b.example.com/", registry.VisibilityInternal); !errors.Is(err, registry.ErrForbidden) {
			t.Fatalf("reader internal submit: %v", err)
		}
		b, err := svc.Submit(t.Context(), admin, "https://b.example.com/", registry.VisibilityInternal)
		if err != nil || b.Visibility != registry.VisibilityInternal {
			t.Fatalf("admin internal submit: %+v, %v", b, err)
		}
		var ve *registry.ValidationError
		if _, err := svc.Submit(t.Context(), admin, "https://c.example.com/", "secret"); !errors.As(err, &ve) || ve.Errors[0].Pointer != "/visibility" {
			t.Fatalf("bad visibility: %v", err)
		}
		var ue *registry.URLError
		if _, err := svc.Submit(t.Context(), anonymous, "https://127.0.0.1/", ""); !errors.As(err, &ue) || ue.Code != registry.URLCodeReserved {
			t.Fatalf("reserved: %v", err)
		}
	})
}

// TestSubmitRaceMakesOneRow (docs/threats.md A.6): 100 concurrent
// submissions of equivalent spellings make exactly one agent; every other
// one answers DuplicateError with its id.
func TestSubmitRaceMakesOneRow(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		spellings := []string{"A.com", "a.com", "https://a.com.", "https://A.COM/", "https://a.com:443/.well-known/agent-card.json"}
		var (
			mu      sync.Mutex
			created []string
			dupIDs  = map[string]int{}
			others  []error
			wg      sync.WaitGroup
		)
		for i := range 100 {
			wg.Go(func() {
				a, err := svc.Submit(t.Context(), anonymous, spellings[i%len(spellings)], "")
				mu.Lock()
				defer mu.Unlock()
				var de *registry.DuplicateError
				switch {
				case err == nil:
					created = append(created, a.ID)
				case errors.As(err, &de) && errors.Is(err, registry.ErrDuplicate):
					dupIDs[de.AgentID]++
				default:
					others = append(others, err)
				}
			})
		}
		wg.Wait()
		if len(others) > 0 || len(created) != 1 || len(dupIDs) != 1 || dupIDs[created[0]] != 99 {
			t.Fatalf("created %v, duplicates %v, other errors %v", created, dupIDs, others)
		}
		page, err := svc.List(t.Context(), admin, registry.ListQuery{})
		if err != nil || page.TotalSize != 1 {
			t.Fatalf("rows: %+v, %v", page, err)
		}
		changes, _, _ := svc.Changes(t.Context(), admin, 0, 1000)
		if len(changes) != 1 {
			t.Fatalf("%d submitted changes, want 1", len(changes))
		}
	})
}

func TestSubmitRemovedAgentRefused(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		a := mustSubmit(t, svc, "https://a.example.com/")
		if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionRemove, registry.ActionRequest{Reason: "spam"}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Submit(t.Context(), anonymous, "a.example.com", ""); !errors.Is(err, registry.ErrAgentRemoved) {
			t.Fatalf("resubmit removed: %v", err)
		}
		if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionRestore, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		var de *registry.DuplicateError
		if _, err := svc.Submit(t.Context(), anonymous, "a.example.com", ""); !errors.As(err, &de) || de.AgentID != a.ID {
			t.Fatalf("resubmit restored: %v", err)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Concurrent submissions of distinct agents each make their agent, with
// its audit entry and change, and each answers its own record — on SQLite
// many of them in one shared transaction (group.go), one of which is
// refused (a removed agent's URL) without holding the others back.
func TestSubmitConcurrentDistinct(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		gone := mustSubmit(t, svc, "https://gone.example.com/")
		if _, err := svc.Act(t.Context(), admin, gone.ID, registry.ActionRemove, registry.ActionRequest{}); err != nil {
			t.Fatal(err)
		}
		const n = 80
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				url := fmt.Sprintf("https://h%d.example.com/", i)
				if i == n/2 {
					url = "https://gone.example.com/"
				}
				a, err := svc.Submit(t.Context(), anonymous, url, "")
				if err == nil {
					if a.CardURL != url+".well-known/agent-card.json" {
						err = fmt.Errorf("answered %s for %s", a.CardURL, url)
					}
					ids[i] = a.ID
				}
				errs[i] = err
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for i, err := range errs {
			switch {
			case i == n/2:
				if !errors.Is(err, registry.ErrAgentRemoved) {
					t.Errorf("the removed agent's URL: %v", err)
				}
			case err != nil:
				t.Errorf("submission %d: %v", i, err)
			case seen[ids[i]]:
				t.Errorf("id %s answered twice", ids[i])
			default:
				seen[ids[i]] = true
			}
		}
		changes, _, err := svc.Changes(t.Context(), admin, 0, 1000)
		if err != nil || len(changes) != n-1+2 { // the removed agent's submit and removal
			t.Fatalf("%d changes (%v), want %d", len(changes), err, n+1)
		}
		audit, _, err := svc.Audit(t.Context(), admin, 0, 1000)
		if err != nil || len(audit) != n-1+2 {
			t.Fatalf("%d audit entries (%v), want %d", len(audit), err, n+1)
		}
		for id := range seen {
			if _, err := svc.Get(t.Context(), admin, id); err != nil {
				t.Errorf("Get %s: %v", id, err)
			}
		}
	})
}

// On SQLite, submissions that arrive while a write runs queue and commit
// together: five held in the queue, one of them a duplicate of another,
// all answered once released — four agents and one DuplicateError.
func TestSubmitGroupCommit(t *testing.T) {
	s := registrytest.SQLite(t)
	svc := newService(s, newClock())
	release := svc.HoldSubmits()
	urls := []string{"https://g1.example.com/", "https://g2.example.com/", "https://g3.example.com/", "https://g4.example.com/", "https://G1.example.com/"}
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() { _, errs[i] = svc.Submit(t.Context(), anonymous, u, "") })
	}
	polltest.Until(t, "five queued submissions", 10*time.Second, func() bool { return svc.QueuedSubmits() == len(urls) })
	release()
	wg.Wait()
	created, dups := 0, 0
	for _, err := range errs {
		var de *registry.DuplicateError
		switch {
		case err == nil:
			created++
		case errors.As(err, &de):
			dups++
		default:
			t.Errorf("submission: %v", err)
		}
	}
	if created != 4 || dups != 1 {
		t.Fatalf("%d created, %d duplicates; want 4 and 1", created, dups)
	}
	if changes, _, err := svc.Changes(t.Context(), admin, 0, 100); err != nil || len(changes) != 4 {
		t.Fatalf("%d changes (%v), want 4", len(changes), err)
	}
}
