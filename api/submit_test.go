package api

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

func TestSubmit(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		r := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://Agent.Example.COM"}`)})
		r.expectStatus(t, http.StatusAccepted)
		var a registry.Agent
		r.json(t, &a)
		if a.CardURL != "https://agent.example.com/.well-known/agent-card.json" || a.Host != "agent.example.com" ||
			a.Status != registry.StatusPending || a.Visibility != registry.VisibilityPublic ||
			a.Health != registry.HealthUnknown || a.Trust != registry.TrustUnknown || a.VersionSeq != 0 || a.Card != nil {
			t.Fatalf("record %+v", a)
		}
		if loc := r.header.Get("Location"); loc != "/api/v1/agents/"+a.ID {
			t.Fatalf("Location %q", loc)
		}
		// The record is readable by id, anonymously (docs/api.md "Agent identity").
		g := h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID})
		g.expectStatus(t, http.StatusOK)
		var got agentView
		g.json(t, &got)
		if got.ID != a.ID || got.CardURL != a.CardURL {
			t.Fatalf("GET %+v", got)
		}

		// An equivalent spelling is the same agent: 409 duplicate-agent naming it.
		d := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://agent.example.com:443/.well-known/agent-card.json"}`)})
		if p := d.expectProblem(t, http.StatusConflict, "duplicate-agent"); p.AgentID != a.ID {
			t.Fatalf("duplicate names %q, want %q", p.AgentID, a.ID)
		}

		// Removed: re-submission is refused until restored.
		admin := h.token(registry.RoleAdmin)
		h.do(req{method: "DELETE", path: "/api/v1/agents/" + a.ID, token: admin}).expectStatus(t, http.StatusOK)
		h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"agent.example.com"}`)}).
			expectProblem(t, http.StatusConflict, "agent-removed")
	})
}

func TestSubmitRejectsURLs(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		for _, tc := range []struct{ url, slug string }{
			{"ftp://agent.example.com/card.json", "invalid-url"},
			{"https://user:pw@agent.example.com/", "invalid-url"},
			{"https://agent.example.com/#frag", "invalid-url"},
			{"http://agent.example.com/", "invalid-url"}, // http needs --allow-insecure-http
			{"https://127.0.0.1/", "reserved-address"},
			{"https://[::1]/", "reserved-address"},
			{"https://10.0.0.5/", "reserved-address"},
			{"", "invalid-url"},
		} {
			r := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(fmt.Sprintf(`{"cardUrl":%q}`, tc.url))})
			if p := r.expectProblem(t, http.StatusBadRequest, tc.slug); p.Detail == "" {
				t.Errorf("%q: no detail", tc.url)
			}
		}
		assertNothingStored(t, h)
	})
}

func TestSubmitVisibility(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://a.example.com/","visibility":"internal"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://a.example.com/","visibility":"secret"}`)}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		r := h.do(req{method: "POST", path: "/api/v1/agents", token: h.token(registry.RoleAdmin),
			body: jsonBody(`{"cardUrl":"https://a.example.com/","visibility":"internal"}`)})
		r.expectStatus(t, http.StatusAccepted)
		var a registry.Agent
		r.json(t, &a)
		if a.Visibility != registry.VisibilityInternal {
			t.Fatalf("visibility %q", a.Visibility)
		}
	})
}

// docs/threats.md A.6: 100 concurrent submissions of equivalent spellings
// make exactly one agent; the other 99 are 409 naming it. No 500.
func TestConcurrentEquivalentSubmissions(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		spellings := []string{
			"https://race.example.com/",
			"https://RACE.example.com",
			"https://race.example.com./",
			"https://race.example.com:443/.well-known/agent-card.json",
			"race.example.com",
		}
		type result struct {
			status  int
			agentID string
		}
		results := make([]result, 100)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				hr, _ := http.NewRequestWithContext(t.Context(), "POST", h.srv.URL+"/api/v1/agents",
					strings.NewReader(fmt.Sprintf(`{"cardUrl":%q}`, spellings[i%len(spellings)])))
				hr.Header.Set("Content-Type", "application/json")
				res, err := h.srv.Client().Do(hr)
				if err != nil {
					t.Error(err)
					return
				}
				defer res.Body.Close()
				var body struct {
					ID      string `json:"id"`
					AgentID string `json:"agentId"`
				}
				r := response{status: res.StatusCode, header: res.Header}
				if err := decodeAndValidate(hr, res, &r, &body); err != nil {
					t.Error(err)
					return
				}
				results[i] = result{res.StatusCode, body.ID + body.AgentID}
			})
		}
		wg.Wait()
		created, conflicts := 0, 0
		id := ""
		for _, r := range results {
			switch r.status {
			case http.StatusAccepted:
				created++
			case http.StatusConflict:
				conflicts++
			default:
				t.Fatalf("status %d", r.status)
			}
			if id == "" {
				id = r.agentID
			}
			if r.agentID != id {
				t.Fatalf("ids differ: %q and %q", id, r.agentID)
			}
		}
		if created != 1 || conflicts != 99 {
			t.Fatalf("%d created, %d conflicts", created, conflicts)
		}
		page := listAll(t, h, h.token(registry.RoleAdmin))
		if page.TotalSize != 1 {
			t.Fatalf("%d agents stored", page.TotalSize)
		}
	})
}
