package api

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

type changesPage struct {
	Changes   []registry.Change `json:"changes"`
	NextAfter int64             `json:"nextAfter"`
}

func (h *harness) changes(token string, after int64, limit int) changesPage {
	h.t.Helper()
	r := h.do(req{method: "GET", path: fmt.Sprintf("/api/v1/changes?after=%d&limit=%d", after, limit), token: token})
	r.expectStatus(h.t, http.StatusOK)
	var p changesPage
	r.json(h.t, &p)
	return p
}

func TestChangesFeed(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		listed := h.submit("https://listed.example.com/", "")
		h.approve(listed.ID, admin) // submitted, changed, health, trust, approved
		hidden := h.submit("https://hidden.example.com/", "")

		// Admin pages through everything, oldest first, without gaps.
		var all []registry.Change
		after := int64(0)
		for range 20 {
			p := h.changes(admin, after, 2)
			if len(p.Changes) == 0 {
				if p.NextAfter != after {
					t.Fatalf("empty page moved nextAfter %d → %d", after, p.NextAfter)
				}
				break
			}
			if len(p.Changes) > 2 || p.NextAfter != p.Changes[len(p.Changes)-1].Seq {
				t.Fatalf("page %+v", p)
			}
			all = append(all, p.Changes...)
			after = p.NextAfter
		}
		kinds := map[string]map[string]int{}
		for i, c := range all {
			if i > 0 && c.Seq <= all[i-1].Seq {
				t.Fatalf("out of order: %+v", all)
			}
			if kinds[c.AgentID] == nil {
				kinds[c.AgentID] = map[string]int{}
			}
			kinds[c.AgentID][c.Kind]++
		}
		if kinds[listed.ID][registry.ChangeSubmitted] != 1 || kinds[listed.ID][registry.ChangeApproved] != 1 ||
			kinds[listed.ID][registry.ChangeChanged] != 1 || kinds[hidden.ID][registry.ChangeSubmitted] != 1 {
			t.Fatalf("kinds %v", kinds)
		}

		// Anonymous callers see only what they may list: not the pending agent.
		anon := h.changes("", 0, 1000)
		for _, c := range anon.Changes {
			if c.AgentID == hidden.ID {
				t.Fatalf("anonymous feed shows the pending agent: %+v", c)
			}
		}
		if len(anon.Changes) == 0 {
			t.Fatal("anonymous feed is empty")
		}

		// Removing both: anonymous callers see the listed agent leave as
		// "unlisted" and still nothing of the pending one (docs/threats.md
		// K.103); the admin sees the removals as they are.
		for _, id := range []string{listed.ID, hidden.ID} {
			h.do(req{method: "DELETE", path: "/api/v1/agents/" + id, token: admin}).expectStatus(t, http.StatusOK)
		}
		anon = h.changes("", anon.NextAfter, 1000)
		if len(anon.Changes) != 1 || anon.Changes[0].AgentID != listed.ID || anon.Changes[0].Kind != registry.ChangeUnlisted {
			t.Fatalf("anonymous feed after the removals: %+v", anon.Changes)
		}
		if p := h.changes(admin, after, 1000); len(p.Changes) != 2 || p.Changes[0].Kind != registry.ChangeRemoved || p.Changes[1].Kind != registry.ChangeRemoved {
			t.Fatalf("admin feed after the removals: %+v", p.Changes)
		}

		// limit is clamped to 1000; bad values are 400.
		h.do(req{method: "GET", path: "/api/v1/changes?limit=5000", token: admin}).expectStatus(t, http.StatusOK)
		for _, q := range []string{"after=-1", "after=x", "limit=0", "limit=ten", "since=3", "after=9223372036854775808", "after=99999999999999999999"} {
			h.do(req{method: "GET", path: "/api/v1/changes?" + q}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		}
		// The largest int64 is a cursor past everything: an empty page that
		// stays where it was asked.
		var last changesPage
		r := h.do(req{method: "GET", path: "/api/v1/changes?after=9223372036854775807"})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &last)
		if len(last.Changes) != 0 || last.NextAfter != 9223372036854775807 {
			t.Fatalf("after=MaxInt64: %+v", last)
		}
	})
}

func TestAuditFeed(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://audited.example.com/", "")
		h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/reject", token: admin, body: jsonBody(`{"reason":"not an agent"}`)}).
			expectStatus(t, http.StatusOK)
		// Page through one entry at a time.
		var got []registry.AuditEntry
		after := int64(0)
		for range 10 {
			r := h.do(req{method: "GET", path: fmt.Sprintf("/api/v1/audit?after=%d&limit=1", after), token: admin})
			r.expectStatus(t, http.StatusOK)
			var page struct {
				Entries   []registry.AuditEntry `json:"entries"`
				NextAfter int64                 `json:"nextAfter"`
			}
			r.json(t, &page)
			if len(page.Entries) == 0 {
				break
			}
			if len(page.Entries) != 1 || page.NextAfter != page.Entries[0].Seq {
				t.Fatalf("page %+v", page)
			}
			got = append(got, page.Entries...)
			after = page.NextAfter
		}
		if len(got) != 3 || got[0].Action != "token-create" || got[1].Action != "submit" || got[2].Action != "reject" ||
			got[2].Reason != "not an agent" || got[2].AgentID != a.ID || got[2].ActorName == "" {
			t.Fatalf("audit %+v", got)
		}
		h.do(req{method: "GET", path: "/api/v1/audit", token: h.token(registry.RoleReader)}).expectProblem(t, http.StatusForbidden, "forbidden")
	})
}
