package api

import (
	"net/http"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// auditCount counts audit entries of action for agent id.
func auditCount(t *testing.T, h *harness, admin, id, action string) int {
	t.Helper()
	r := h.do(req{method: "GET", path: "/api/v1/audit?limit=1000", token: admin})
	r.expectStatus(t, http.StatusOK)
	var body struct {
		Entries []registry.AuditEntry `json:"entries"`
	}
	r.json(t, &body)
	n := 0
	for _, e := range body.Entries {
		if e.AgentID == id && e.Action == action {
			n++
		}
	}
	return n
}

func TestCurationActions(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://curate.example.com/", "")
		path := "/api/v1/agents/" + a.ID

		// Nothing fetched yet: approving any version is a conflict naming 0.
		p := h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectProblem(t, http.StatusConflict, "version-conflict")
		if p.CurrentVersionSeq == nil || *p.CurrentVersionSeq != 0 {
			t.Fatalf("currentVersionSeq %v", p.CurrentVersionSeq)
		}
		// versionSeq is required to approve.
		pr := h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"reason":"looks fine"}`)}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		if pr.Errors[0].Pointer != "/versionSeq" {
			t.Fatalf("errors %+v", pr.Errors)
		}
		h.do(req{method: "POST", path: path + "/approve", token: admin}).expectProblem(t, http.StatusBadRequest, "invalid-json")

		// docs/threats.md F.65: the admin reviewed v1, the crawler stored v2
		// meanwhile; approving v1 is 409 naming v2, and v2 is not approved.
		h.fetch(a.ID, h.cardBytes(cardV1))
		h.fetch(a.ID, h.cardBytes(cardCurrency))
		p = h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectProblem(t, http.StatusConflict, "version-conflict")
		if p.CurrentVersionSeq == nil || *p.CurrentVersionSeq != 2 {
			t.Fatalf("currentVersionSeq %v", p.CurrentVersionSeq)
		}
		var got agentView
		h.do(req{method: "GET", path: path}).json(t, &got)
		if got.Status != registry.StatusPending {
			t.Fatalf("status after conflict %q", got.Status)
		}

		r := h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":2,"reason":"reviewed"}`)})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &got)
		if got.Status != registry.StatusApproved || got.VersionSeq != 2 {
			t.Fatalf("after approve: %+v", got)
		}
		// docs/threats.md I.80: repeating is 200 with no second audit entry.
		h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":2}`)}).expectStatus(t, http.StatusOK)
		if n := auditCount(t, h, admin, a.ID, "approve"); n != 1 {
			t.Fatalf("%d approve audit entries, want 1", n)
		}
		// Invalid transitions are 409.
		h.do(req{method: "POST", path: path + "/reject", token: admin}).expectProblem(t, http.StatusConflict, "invalid-transition")
		h.do(req{method: "POST", path: path + "/suspend", token: admin, body: jsonBody(`{}`)})
		h.do(req{method: "DELETE", path: path, token: admin})
		h.do(req{method: "POST", path: path + "/restore", token: admin}) // removed → pending
		h.do(req{method: "POST", path: path + "/suspend", token: admin}).expectProblem(t, http.StatusConflict, "invalid-transition")
		h.fetch(a.ID, h.cardBytes(cardV1))
		h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":3}`)}).expectStatus(t, http.StatusOK)
		// Restoring an approved agent is already in effect: 200, no entry.
		h.do(req{method: "POST", path: path + "/restore", token: admin, body: jsonBody(`{}`)}).expectStatus(t, http.StatusOK)
		if n := auditCount(t, h, admin, a.ID, "restore"); n != 1 {
			t.Fatalf("%d restore audit entries, want 1", n)
		}

		// suspend ⇄ restore, each repeat idempotent.
		for _, step := range []struct {
			action string
			want   registry.Status
		}{{"suspend", registry.StatusSuspended}, {"suspend", registry.StatusSuspended}, {"restore", registry.StatusApproved}} {
			r := h.do(req{method: "POST", path: path + "/" + step.action, token: admin, body: jsonBody(`{"reason":"incident"}`)})
			r.expectStatus(t, http.StatusOK)
			r.json(t, &got)
			if got.Status != step.want {
				t.Fatalf("%s: status %q", step.action, got.Status)
			}
		}
		if n := auditCount(t, h, admin, a.ID, "suspend"); n != 2 {
			t.Fatalf("%d suspend audit entries, want 2 (one per real transition)", n)
		}

		// Remove (body optional) and remove again: 200, one more audit entry.
		removes := auditCount(t, h, admin, a.ID, "remove")
		h.do(req{method: "DELETE", path: path, token: admin}).expectStatus(t, http.StatusOK)
		r = h.do(req{method: "DELETE", path: path, token: admin, body: jsonBody(`{"reason":"again"}`)})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &got)
		if got.Status != registry.StatusRemoved {
			t.Fatalf("status %q", got.Status)
		}
		if n := auditCount(t, h, admin, a.ID, "remove"); n != removes+1 {
			t.Fatalf("%d remove audit entries, want %d", n, removes+1)
		}
		h.do(req{method: "POST", path: path + "/crawl", token: admin}).expectProblem(t, http.StatusConflict, "invalid-transition")
		// Restore of a removed agent goes back to pending.
		r = h.do(req{method: "POST", path: path + "/restore", token: admin})
		r.json(t, &got)
		if got.Status != registry.StatusPending {
			t.Fatalf("restored to %q", got.Status)
		}

		// Bodies of actions are checked like any other.
		h.do(req{method: "POST", path: path + "/suspend", token: admin, body: jsonBody(`{"why":"x"}`)}).expectProblem(t, http.StatusBadRequest, "unknown-field")
		h.do(req{method: "POST", path: path + "/suspend", token: admin, body: jsonBody(`{"versionSeq":"2"}`)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "POST", path: path + "/suspend", token: admin, body: jsonBody(`{"versionSeq":-1}`)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "POST", path: "/api/v1/agents/nope/suspend", token: admin}).expectProblem(t, http.StatusNotFound, "not-found")
	})
}

func TestVisibilityAndCrawl(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://vis.example.com/", "")
		path := "/api/v1/agents/" + a.ID
		var got agentView
		r := h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"visibility":"internal"}`)})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &got)
		if got.Visibility != registry.VisibilityInternal {
			t.Fatalf("visibility %q", got.Visibility)
		}
		h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{}`)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"visibility":"hidden"}`)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"status":"approved"}`)}).expectProblem(t, http.StatusBadRequest, "unknown-field")
		h.do(req{method: "PATCH", path: path, token: admin}).expectProblem(t, http.StatusBadRequest, "invalid-json")

		r = h.do(req{method: "POST", path: path + "/crawl", token: admin, body: jsonBody(`{}`)})
		r.expectStatus(t, http.StatusAccepted)
		r.json(t, &got)
		if got.NextFetchAt == nil {
			t.Fatal("crawl answered no nextFetchAt")
		}
		h.do(req{method: "POST", path: path + "/crawl", token: admin, body: jsonBody(`{"now":true}`)}).expectProblem(t, http.StatusBadRequest, "unknown-field")
	})
}

// An internal agent is not readable by anonymous callers even with its id,
// nor by a publisher token of another host: the record, its card and its
// versions answer 404 as if it did not exist; reader and admin tokens and
// the publisher token of its host read them (docs/security.md "Who sees
// what").
func TestInternalAgentNeedsAToken(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		reader := h.token(registry.RoleReader)
		pub := h.token(registry.RolePublisher, "hidden.example.com")
		other := h.token(registry.RolePublisher, "other.example.com")
		a := h.submit("https://hidden.example.com/", "")
		h.fetch(a.ID, h.cardBytes(cardCurrency))
		path := "/api/v1/agents/" + a.ID
		h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"visibility":"internal"}`)}).expectStatus(t, http.StatusOK)
		for _, p := range []string{path, path + "/card", path + "/versions", path + "/versions/1"} {
			h.do(req{method: "GET", path: p}).expectProblem(t, http.StatusNotFound, "not-found")
			h.do(req{method: "GET", path: p, token: other}).expectProblem(t, http.StatusNotFound, "not-found")
			for _, tok := range []string{reader, pub, admin} {
				h.do(req{method: "GET", path: p, token: tok}).expectStatus(t, http.StatusOK)
			}
		}
		// Back to public: the id reads again for anyone.
		h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"visibility":"public"}`)}).expectStatus(t, http.StatusOK)
		h.do(req{method: "GET", path: path + "/card"}).expectStatus(t, http.StatusOK)
	})
}
