package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/cardexhq/cardex/registry"
)

type auditPage struct {
	Entries    []registry.AuditEntry `json:"entries"`
	NextAfter  *int64                `json:"nextAfter"`
	NextBefore *int64                `json:"nextBefore"`
}

// The audit log is filtered by agent, actor and action, and read newest
// first in pages.
func TestAuditFiltersAndNewestFirst(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://audit-a.example.com/", "")
		b := h.submit("https://audit-b.example.com/", "")
		h.fetch(a.ID, h.cardBytes(cardV1))
		h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/approve", token: admin, body: jsonBody(`{"versionSeq":1,"reason":"ok"}`)}).
			expectStatus(t, http.StatusOK)
		h.do(req{method: "POST", path: "/api/v1/agents/" + b.ID + "/reject", token: admin, body: jsonBody(`{"reason":"spam"}`)}).
			expectStatus(t, http.StatusOK)
		h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/suspend", token: admin, body: jsonBody(`{}`)}).
			expectStatus(t, http.StatusOK)

		get := func(q string) auditPage {
			t.Helper()
			var p auditPage
			h.do(req{method: "GET", path: "/api/v1/audit?" + q, token: admin}).json(t, &p)
			return p
		}
		actions := func(p auditPage) []string {
			var out []string
			for _, e := range p.Entries {
				out = append(out, e.Action+":"+e.AgentID)
			}
			return out
		}
		if got := actions(get("agentId=" + a.ID)); len(got) != 3 || got[0] != "submit:"+a.ID || got[2] != "suspend:"+a.ID {
			t.Errorf("agentId filter %v", got)
		}
		if got := actions(get("action=reject&action=suspend")); len(got) != 2 || got[0] != "reject:"+b.ID || got[1] != "suspend:"+a.ID {
			t.Errorf("action filter %v", got)
		}
		p := get("actor=anonymous")
		if len(p.Entries) != 2 || p.Entries[0].Action != "submit" || p.Entries[1].Action != "submit" {
			t.Errorf("actor=anonymous %v", actions(p))
		}
		var names []string
		for _, e := range get("order=newest&limit=1000").Entries {
			names = append(names, e.ActorName)
		}
		tokName := names[0]
		if got := actions(get("actor=" + tokName)); len(got) != 3 {
			t.Errorf("actor=%s %v", tokName, got)
		}
		// Newest first, two at a time, down to the end.
		p = get("order=newest&limit=2&agentId=" + a.ID)
		if got := actions(p); len(got) != 2 || got[0] != "suspend:"+a.ID || got[1] != "approve:"+a.ID {
			t.Fatalf("newest page %v", got)
		}
		if p.NextBefore == nil || *p.NextBefore != p.Entries[1].Seq || p.NextAfter != nil {
			t.Fatalf("nextBefore %v nextAfter %v", p.NextBefore, p.NextAfter)
		}
		p = get("order=newest&limit=2&agentId=" + a.ID + "&before=" + strconv.FormatInt(*p.NextBefore, 10))
		if got := actions(p); len(got) != 1 || got[0] != "submit:"+a.ID || p.NextBefore == nil || *p.NextBefore != 0 {
			t.Errorf("last newest page %v next %v", got, p.NextBefore)
		}
		// Oldest first keeps its feed shape.
		p = get("limit=1")
		if p.NextAfter == nil || *p.NextAfter != p.Entries[0].Seq || p.NextBefore != nil {
			t.Errorf("oldest page next %v/%v", p.NextAfter, p.NextBefore)
		}
		for q, code := range map[string]string{
			"action=frobnicate":          "enum",
			"order=sideways":             "enum",
			"before=5":                   "conflict",
			"order=newest&after=3":       "conflict",
			"agentId=x&agentId=y":        "repeated",
			"order=newest&before=0":      "minimum",
			"agent=" + a.ID:              "unknown-parameter",
			"order=newest&order=oldest":  "repeated",
			"actor=a&actor=b&limit=1000": "repeated",
		} {
			pr := h.do(req{method: "GET", path: "/api/v1/audit?" + q, token: admin}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(pr.Errors) == 0 || pr.Errors[0].Code != code {
				t.Errorf("%s: errors %+v, want code %s", q, pr.Errors, code)
			}
		}
		h.do(req{method: "GET", path: "/api/v1/audit?agentId=" + a.ID}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		h.do(req{method: "GET", path: "/api/v1/audit?action=frobnicate"}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
	})
}

// Reject and suspend with a versionSeq are bound to the version under
// review: a stale one is 409 and changes nothing.
func TestRejectAndSuspendBoundToTheVersionGiven(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://bound.example.com/", "")
		h.fetch(a.ID, h.cardBytes(cardV1))
		h.fetch(a.ID, h.cardBytes(cardCurrency))
		path := "/api/v1/agents/" + a.ID
		p := h.do(req{method: "POST", path: path + "/reject", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectProblem(t, http.StatusConflict, "version-conflict")
		if p.CurrentVersionSeq == nil || *p.CurrentVersionSeq != 2 {
			t.Fatalf("currentVersionSeq %v", p.CurrentVersionSeq)
		}
		var got registry.Agent
		h.do(req{method: "GET", path: path, token: admin}).json(t, &got)
		if got.Status != registry.StatusPending {
			t.Fatalf("a stale reject changed the status to %s", got.Status)
		}
		h.do(req{method: "POST", path: path + "/approve", token: admin, body: jsonBody(`{"versionSeq":2}`)}).expectStatus(t, http.StatusOK)
		h.do(req{method: "POST", path: path + "/suspend", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectProblem(t, http.StatusConflict, "version-conflict")
		h.do(req{method: "POST", path: path + "/suspend", token: admin, body: jsonBody(`{"versionSeq":2}`)}).expectStatus(t, http.StatusOK)
		// Without versionSeq, as before: not bound.
		b := h.submit("https://unbound.example.com/", "")
		h.do(req{method: "POST", path: "/api/v1/agents/" + b.ID + "/reject", token: admin}).expectStatus(t, http.StatusOK)
	})
}

// jsonLinesDecoder lets the OpenAPI check validate a JSON Lines body as
// the array of its lines' values.
func jsonLinesDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	var out []any
	dec := json.NewDecoder(body)
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

func init() { openapi3filter.RegisterBodyDecoder("application/jsonl", jsonLinesDecoder) }

// GET /audit filters by time; GET /audit/export downloads what the
// filters select as JSON Lines or CSV.
func TestAuditTimeRangeAndExport(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://export-a.example.com/", "")
		h.fetch(a.ID, h.cardBytes(cardV1))
		h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/approve", token: admin, body: jsonBody(`{"versionSeq":1,"reason":"=HYPERLINK(1)"}`)}).
			expectStatus(t, http.StatusOK)
		var p auditPage
		h.do(req{method: "GET", path: "/api/v1/audit?since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z", token: admin}).json(t, &p)
		if len(p.Entries) != 3 { // token-create, submit, approve
			t.Fatalf("range: %+v", p.Entries)
		}
		h.do(req{method: "GET", path: "/api/v1/audit?since=2999-01-01T00:00:00Z", token: admin}).json(t, &p)
		if len(p.Entries) != 0 {
			t.Fatalf("future: %+v", p.Entries)
		}
		r := h.do(req{method: "GET", path: "/api/v1/audit/export?agentId=" + a.ID, token: admin})
		r.expectStatus(t, http.StatusOK)
		if ct, cd := r.header.Get("Content-Type"), r.header.Get("Content-Disposition"); ct != "application/jsonl; charset=utf-8" || cd != `attachment; filename="cardex-audit.jsonl"` {
			t.Fatalf("headers %q %q", ct, cd)
		}
		lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], `"action":"submit"`) || !strings.Contains(lines[1], `"action":"approve"`) {
			t.Fatalf("jsonl %q", r.body)
		}
		r = h.do(req{method: "GET", path: "/api/v1/audit/export?format=csv&action=approve", token: admin})
		r.expectStatus(t, http.StatusOK)
		rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
		if err != nil || len(rows) != 2 || rows[1][4] != "approve" || rows[1][6] != "'=HYPERLINK(1)" {
			t.Fatalf("csv %q: %v", r.body, err)
		}
		// Nothing selected: an empty file, still 200.
		r = h.do(req{method: "GET", path: "/api/v1/audit/export?since=2999-01-01T00:00:00Z", token: admin})
		r.expectStatus(t, http.StatusOK)
		if len(r.body) != 0 {
			t.Fatalf("empty export %q", r.body)
		}
		for _, bad := range []struct{ q, ptr string }{
			{"format=xml", "/format"},
			{"since=yesterday", "/since"},
			{"since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", "/until"},
			{"format=csv&format=jsonl", "/format"},
		} {
			p := h.do(req{method: "GET", path: "/api/v1/audit/export?" + bad.q, token: admin}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(p.Errors) != 1 || p.Errors[0].Pointer != bad.ptr {
				t.Errorf("%s: %+v", bad.q, p.Errors)
			}
		}
		h.do(req{method: "GET", path: "/api/v1/audit/export", token: h.token(registry.RoleReader)}).expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "GET", path: "/api/v1/audit/export"}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
	})
}
