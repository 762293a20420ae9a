package registry_test

import (
	"fmt"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// The search index follows IndexSource: it must see every change and every
// agent, removed ones included, whatever a caller of Changes may list.
func TestIndexSourceIsUnfiltered(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		svc := newService(s, newClock())
		var ids []string
		for i := range 5 {
			ids = append(ids, mustSubmit(t, svc, fmt.Sprintf("https://agent-%d.example.com/", i)).ID)
		}
		if _, err := svc.Act(ctx, admin, ids[1], registry.ActionRemove, registry.ActionRequest{Reason: "spam"}); err != nil {
			t.Fatal(err)
		}
		src := svc.IndexSource()

		latest, err := src.LatestSeq(ctx)
		if err != nil || latest != 6 {
			t.Fatalf("LatestSeq = %d, %v; want 6 (5 submitted + 1 removed)", latest, err)
		}
		// Anonymous callers of the public change log see none of these
		// pending agents, not even the removal of one (docs/threats.md
		// K.103); the index must see all six entries.
		if pub, _, err := svc.Changes(ctx, anonymous, 0, 100); err != nil || len(pub) != 0 {
			t.Fatalf("anonymous Changes = %d entries, %v; want none", len(pub), err)
		}
		var all []registry.Change
		after := int64(0)
		for range 10 {
			page, next, err := src.Changes(ctx, after, 4)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				if next != after {
					t.Fatalf("empty page moved the cursor from %d to %d", after, next)
				}
				break
			}
			all = append(all, page...)
			after = next
		}
		if len(all) != 6 || all[5].Kind != registry.ChangeRemoved || all[5].AgentID != ids[1] {
			t.Fatalf("changes = %+v", all)
		}
		for i := 1; i < len(all); i++ {
			if all[i].Seq <= all[i-1].Seq {
				t.Fatalf("change log not monotonic: %d after %d", all[i].Seq, all[i-1].Seq)
			}
		}

		got, err := src.Agents(ctx, []string{ids[1], ids[3], "no-such-id"})
		if err != nil || len(got) != 2 {
			t.Fatalf("Agents = %d, %v; want 2", len(got), err)
		}
		statuses := map[string]registry.Status{}
		for _, a := range got {
			statuses[a.ID] = a.Status
		}
		if statuses[ids[1]] != registry.StatusRemoved || statuses[ids[3]] != registry.StatusPending {
			t.Fatalf("statuses = %v", statuses)
		}

		var listed []string
		afterID := ""
		for range 10 {
			page, err := src.ListAgents(ctx, afterID, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, a := range page {
				listed = append(listed, a.ID)
			}
			afterID = page[len(page)-1].ID
		}
		if len(listed) != 5 {
			t.Fatalf("ListAgents listed %d agents, want 5", len(listed))
		}
		for i := 1; i < len(listed); i++ {
			if listed[i] <= listed[i-1] {
				t.Fatalf("ListAgents not in id order: %q after %q", listed[i], listed[i-1])
			}
		}
	})
}
