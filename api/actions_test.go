package api

import (
	"fmt"
	"net/http"
	"strings"
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

// POST /agents/{id}/reject with a flagged agent's candidate declines the
// candidate: 200, the agent stays approved on its last verified version,
// needsReview clears, and the audit entry names who declined which version.
// (It answered 409 invalid-transition before.)
func TestRejectDeclinesFlaggedCandidate(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://decline.example.com/", "")
		path := "/api/v1/agents/" + a.ID
		h.fetchVerdict(a.ID, h.cardBytes(cardV1), nil, registry.TrustVerified, "K1")
		h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).expectStatus(t, http.StatusOK)
		h.fetch(a.ID, h.cardBytes(cardCurrency)) // unsigned now: flagged
		var got agentView
		h.do(req{method: "GET", path: path, token: admin}).json(t, &got)
		if !got.NeedsReview || got.VersionSeq != 1 {
			t.Fatalf("not flagged: %+v", got)
		}
		p := h.do(req{method: "POST", path: path + "/reject", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectProblem(t, http.StatusConflict, "version-conflict")
		if p.CurrentVersionSeq == nil || *p.CurrentVersionSeq != 2 {
			t.Fatalf("currentVersionSeq %v", p.CurrentVersionSeq)
		}
		r := h.do(req{method: "POST", path: path + "/reject", token: admin, body: jsonBody(`{"versionSeq":2,"reason":"unsigned copy"}`)})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &got)
		if got.Status != registry.StatusApproved || got.NeedsReview || got.VersionSeq != 1 || got.Trust != registry.TrustVerified {
			t.Fatalf("after decline: %+v", got)
		}
		if n := auditCount(t, h, admin, a.ID, "reject"); n != 1 {
			t.Fatalf("%d reject audit entries", n)
		}
		// Nothing is flagged any more: a second decline is an invalid transition.
		h.do(req{method: "POST", path: path + "/reject", token: admin}).expectProblem(t, http.StatusConflict, "invalid-transition")
	})
}

// POST /agents/bulk: one action on many agents, answered per item in
// request order, with the same rules as the single action.
func TestBulkCuration(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://bulk-a.example.com/", "")
		b := h.submit("https://bulk-b.example.com/", "")
		cc := h.submit("https://bulk-c.example.com/", "")
		h.fetch(a.ID, h.cardBytes(cardV1))
		h.fetch(b.ID, h.cardBytes(cardV1))
		body := `{"action":"approve","reason":"import","items":[{"id":"` + a.ID + `","versionSeq":1},{"id":"` + b.ID + `","versionSeq":7},{"id":"` + cc.ID + `","versionSeq":1},{"id":"nope","versionSeq":1}]}`
		r := h.do(req{method: "POST", path: "/api/v1/agents/bulk", token: admin, body: jsonBody(body)})
		r.expectStatus(t, http.StatusOK)
		var got struct {
			Results []struct {
				ID         string          `json:"id"`
				OK         bool            `json:"ok"`
				Status     registry.Status `json:"status"`
				VersionSeq *int64          `json:"versionSeq"`
				Problem    *struct {
					Type              string `json:"type"`
					Status            int    `json:"status"`
					CurrentVersionSeq *int64 `json:"currentVersionSeq"`
				} `json:"problem"`
			} `json:"results"`
			Succeeded, Failed int
		}
		r.json(t, &got)
		if got.Succeeded != 1 || got.Failed != 3 || len(got.Results) != 4 {
			t.Fatalf("answer %+v", got)
		}
		if r0 := got.Results[0]; r0.ID != a.ID || !r0.OK || r0.Status != registry.StatusApproved || *r0.VersionSeq != 1 || r0.Problem != nil {
			t.Errorf("item 0 %+v", r0)
		}
		if r1 := got.Results[1]; r1.OK || r1.Problem.Type != "/problems/version-conflict" || r1.Problem.Status != 409 || *r1.Problem.CurrentVersionSeq != 1 {
			t.Errorf("item 1 %+v", r1)
		}
		if r2 := got.Results[2]; r2.OK || r2.Problem.Type != "/problems/version-conflict" || *r2.Problem.CurrentVersionSeq != 0 {
			t.Errorf("item 2 %+v", r2)
		}
		if r3 := got.Results[3]; r3.OK || r3.Problem.Type != "/problems/not-found" || r3.Problem.Status != 404 {
			t.Errorf("item 3 %+v", r3)
		}
		if n := auditCount(t, h, admin, a.ID, "approve"); n != 1 {
			t.Errorf("%d approve entries", n)
		}
		// Refusals of the whole request.
		reader := h.token(registry.RoleReader)
		h.do(req{method: "POST", path: "/api/v1/agents/bulk", token: reader, body: jsonBody(body)}).expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "POST", path: "/api/v1/agents/bulk", body: jsonBody(body)}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		for _, bad := range []struct{ body, slug, ptr string }{
			{`{"action":"promote","items":[{"id":"x"}]}`, "validation-failed", "/action"},
			{`{"action":"suspend","items":[]}`, "validation-failed", "/items"},
			{`{"action":"suspend","items":[{"versionSeq":1}]}`, "validation-failed", "/items/0/id"},
			{`{"action":"suspend","items":[{"id":"x","versionSeq":-1}]}`, "validation-failed", "/items/0/versionSeq"},
			{`{"action":"suspend","items":[{"id":"x","why":1}]}`, "unknown-field", "/items/0/why"},
			{`{"action":"suspend","items":{"id":"x"}}`, "validation-failed", "/items"},
		} {
			p := h.do(req{method: "POST", path: "/api/v1/agents/bulk", token: admin, body: jsonBody(bad.body)}).expectProblem(t, http.StatusBadRequest, bad.slug)
			if len(p.Errors) != 1 || p.Errors[0].Pointer != bad.ptr {
				t.Errorf("%s: errors %+v", bad.body, p.Errors)
			}
		}
		// 1000 items fit in the 64 KiB body; 1001 are refused.
		var sb strings.Builder
		sb.WriteString(`{"action":"suspend","items":[`)
		for i := range registry.MaxBulk + 1 {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"id":"AAAAAAAAAAAAAAAAAA%04d","versionSeq":12345}`, i)
		}
		many := sb.String() + `]}`
		cut := strings.LastIndex(many[:len(many)-2], `,{"id"`)
		r = h.do(req{method: "POST", path: "/api/v1/agents/bulk", token: admin, body: jsonBody(many[:cut] + `]}`)})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &got)
		if len(got.Results) != registry.MaxBulk || got.Failed != registry.MaxBulk {
			t.Errorf("1000 items: %d results, %d failed", len(got.Results), got.Failed)
		}
		h.do(req{method: "POST", path: "/api/v1/agents/bulk", token: admin, body: jsonBody(many)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
	})
}
