package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// approve makes an agent approved the way an admin would: fetch a card,
// then approve the version reviewed.
func (h *harness) approve(id, admin string) {
	h.t.Helper()
	h.fetch(id, h.cardBytes(cardV1))
	h.do(req{method: "POST", path: "/api/v1/agents/" + id + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
		expectStatus(h.t, http.StatusOK)
}

func ids(p agentPage) []string {
	out := make([]string, len(p.Agents))
	for i, a := range p.Agents {
		out[i] = a.ID
	}
	slices.Sort(out)
	return out
}

// docs/api.md "Curation and visibility": anonymous callers list approved public agents that are
// not gone; readers add internal ones; admins see everything and may filter.
func TestListVisibility(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		reader := h.token(registry.RoleReader)
		pending := h.submit("https://pending.example.com/", "")
		public := h.submit("https://public.example.com/", "")
		h.approve(public.ID, admin)
		internal := h.submit("https://internal.example.com/", "")
		h.approve(internal.ID, admin)
		h.do(req{method: "PATCH", path: "/api/v1/agents/" + internal.ID, token: admin, body: jsonBody(`{"visibility":"internal"}`)}).
			expectStatus(t, http.StatusOK)
		removed := h.submit("https://removed.example.com/", "")
		h.approve(removed.ID, admin)
		h.do(req{method: "DELETE", path: "/api/v1/agents/" + removed.ID, token: admin, body: jsonBody(`{"reason":"spam"}`)}).
			expectStatus(t, http.StatusOK)

		want := func(names ...registry.Agent) []string {
			var out []string
			for _, a := range names {
				out = append(out, a.ID)
			}
			slices.Sort(out)
			return out
		}
		if got := ids(listAll(t, h, "")); !slices.Equal(got, want(public)) {
			t.Fatalf("anonymous sees %v, want %v", got, want(public))
		}
		if got := ids(listAll(t, h, reader)); !slices.Equal(got, want(public, internal)) {
			t.Fatalf("reader sees %v", got)
		}
		all := listAll(t, h, admin)
		if got := ids(all); !slices.Equal(got, want(pending, public, internal, removed)) || all.TotalSize != 4 {
			t.Fatalf("admin sees %v (total %d)", got, all.TotalSize)
		}
		for _, a := range all.Agents {
			// Lists carry the card's summary, not the card (docs/api.md
			// "Lists and search").
			if a.ID == public.ID && (a.Summary == nil || a.Summary.Name != "GeoSpatial Route Planner Agent" || a.VersionSeq != 1) {
				t.Fatalf("listed record lacks its summary: %+v", a)
			}
		}

		// A pending agent is readable by id; a removed one is hidden (404)
		// from everyone but admins.
		h.do(req{method: "GET", path: "/api/v1/agents/" + pending.ID}).expectStatus(t, http.StatusOK)
		h.do(req{method: "GET", path: "/api/v1/agents/" + removed.ID}).expectProblem(t, http.StatusNotFound, "not-found")
		h.do(req{method: "GET", path: "/api/v1/agents/" + removed.ID, token: reader}).expectProblem(t, http.StatusNotFound, "not-found")
		h.do(req{method: "GET", path: "/api/v1/agents/" + removed.ID, token: admin}).expectStatus(t, http.StatusOK)
		h.do(req{method: "GET", path: "/api/v1/agents/no-such-agent-id"}).expectProblem(t, http.StatusNotFound, "not-found")

		// Non-admins may not filter on status, health or visibility.
		for _, q := range []string{"status=pending", "health=ok", "visibility=internal"} {
			h.do(req{method: "GET", path: "/api/v1/agents?" + q}).expectProblem(t, http.StatusForbidden, "forbidden")
			h.do(req{method: "GET", path: "/api/v1/agents?" + q, token: reader}).expectProblem(t, http.StatusForbidden, "forbidden")
		}
		// Admin filters; repeating a parameter is OR.
		r := h.do(req{method: "GET", path: "/api/v1/agents?status=pending&status=removed", token: admin})
		r.expectStatus(t, http.StatusOK)
		var p agentPage
		r.json(t, &p)
		if got := ids(p); !slices.Equal(got, want(pending, removed)) {
			t.Fatalf("status filter: %v", got)
		}
		r = h.do(req{method: "GET", path: "/api/v1/agents?status=approved&visibility=internal", token: admin})
		r.json(t, &p)
		if got := ids(p); !slices.Equal(got, want(internal)) {
			t.Fatalf("status AND visibility: %v", got)
		}
		// Trust is a public filter.
		r = h.do(req{method: "GET", path: "/api/v1/agents?trust=unsigned"})
		r.json(t, &p)
		if got := ids(p); !slices.Equal(got, want(public)) {
			t.Fatalf("trust filter: %v", got)
		}
	})
}

// docs/threats.md I.82: huge page sizes are clamped, pages are cursors, and
// a forged cursor is a 400.
func TestListPagination(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		for i := range 105 {
			if _, err := h.svc.Submit(h.ctx(), registry.Anonymous, fmt.Sprintf("https://page-%03d.example.com/", i), registry.VisibilityPublic); err != nil {
				t.Fatal(err)
			}
		}
		r := h.do(req{method: "GET", path: "/api/v1/agents?pageSize=100", token: admin})
		r.expectStatus(t, http.StatusOK)
		var p agentPage
		r.json(t, &p)
		if len(p.Agents) != 100 || p.TotalSize != 105 || p.NextPageToken == "" {
			t.Fatalf("largest page: %d agents, total %d, next %q", len(p.Agents), p.TotalSize, p.NextPageToken)
		}
		// Over 100 is refused, not clamped (docs/api.md "Page sizes").
		for _, size := range []string{"101", "1000000000", "99999999999999999999999"} {
			pr := h.do(req{method: "GET", path: "/api/v1/agents?pageSize=" + size, token: admin}).
				expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(pr.Errors) != 1 || pr.Errors[0].Pointer != "/pageSize" {
				t.Fatalf("pageSize=%s: %+v", size, pr.Errors)
			}
		}
		r = h.do(req{method: "GET", path: "/api/v1/agents", token: admin})
		r.json(t, &p)
		if len(p.Agents) != 20 {
			t.Fatalf("default page: %d agents", len(p.Agents))
		}
		// Walk every page by name: each agent exactly once, in order.
		seen := map[string]bool{}
		token := ""
		for range 10 {
			path := "/api/v1/agents?sort=name&pageSize=40"
			if token != "" {
				path += "&pageToken=" + url.QueryEscape(token)
			}
			r := h.do(req{method: "GET", path: path, token: admin})
			r.expectStatus(t, http.StatusOK)
			var page agentPage
			r.json(t, &page)
			for _, a := range page.Agents {
				if seen[a.ID] {
					t.Fatalf("agent %s on two pages", a.ID)
				}
				seen[a.ID] = true
			}
			if token = page.NextPageToken; token == "" {
				break
			}
		}
		if len(seen) != 105 {
			t.Fatalf("walked %d agents, want 105", len(seen))
		}
		for _, bad := range []string{"garbage", "eyJzIjoidXBkYXRlZCJ9", url.QueryEscape(p.NextPageToken + "x")} {
			pr := h.do(req{method: "GET", path: "/api/v1/agents?pageToken=" + bad, token: admin}).
				expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(pr.Errors) != 1 || pr.Errors[0].Pointer != "/pageToken" {
				t.Fatalf("errors %+v", pr.Errors)
			}
		}
		// A cursor is bound to its sort order.
		h.do(req{method: "GET", path: "/api/v1/agents?sort=name&pageToken=" + url.QueryEscape(p.NextPageToken), token: admin}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
	})
}

func TestListQueryValidation(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		for q, ptr := range map[string]string{
			"pageSize=-1":            "/pageSize",
			"pageSize=0":             "/pageSize",
			"pageSize=101":           "/pageSize",
			"pageSize=ten":           "/pageSize",
			"sort=name&sort=updated": "/sort",
			"trust=trusted":          "/trust",
			"status=live":            "/status",
			"colour=blue":            "/colour",
		} {
			p := h.do(req{method: "GET", path: "/api/v1/agents?" + q}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(p.Errors) != 1 || p.Errors[0].Pointer != ptr {
				t.Errorf("%s: errors %+v", q, p.Errors)
			}
		}
	})
}
