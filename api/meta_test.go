package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestHealthAndReadiness(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		r := h.do(req{method: "GET", path: "/healthz"})
		r.expectStatus(t, http.StatusOK)
		if string(r.body) != `{"status":"ok"}` {
			t.Fatalf("healthz body %s", r.body)
		}
		r = h.do(req{method: "GET", path: "/readyz"})
		r.expectStatus(t, http.StatusOK)
		if string(r.body) != `{"status":"ready"}` {
			t.Fatalf("readyz body %s", r.body)
		}
		// Once the database is gone the server is alive but not ready.
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
		r = h.do(req{method: "GET", path: "/readyz"})
		p := r.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
		if r.header.Get("Retry-After") != "5" || p.Detail != "the database is unreachable" {
			t.Fatalf("Retry-After %q detail %q", r.header.Get("Retry-After"), p.Detail)
		}
		h.do(req{method: "GET", path: "/healthz"}).expectStatus(t, http.StatusOK)
	})
}

func TestOpenAPIServed(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	r := h.do(req{method: "GET", path: "/api/v1/openapi.yaml"})
	r.expectStatus(t, http.StatusOK)
	if !bytes.Equal(r.body, OpenAPI) || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("Content-Type %q, %d bytes", r.header.Get("Content-Type"), len(r.body))
	}
}

func TestProblemPages(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	for slug, pt := range problemTypes {
		r := h.do(req{method: "GET", path: "/problems/" + slug})
		r.expectStatus(t, http.StatusOK)
		if r.header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.HasPrefix(string(r.body), pt.title+"\n\n") || len(r.body) < 40 {
			t.Errorf("%s: %q %q", slug, r.header.Get("Content-Type"), r.body)
		}
	}
	h.do(req{method: "GET", path: "/problems/no-such-thing"}).expectProblem(t, http.StatusNotFound, "not-found")
}

func TestUnknownRoutesAndMethodsAreProblems(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	h.do(req{method: "GET", path: "/api/v1/nothing-here"}).expectProblem(t, http.StatusNotFound, "not-found")
	h.do(req{method: "GET", path: "/nothing-here"}).expectProblem(t, http.StatusNotFound, "not-found")
	r := h.do(req{method: "PUT", path: "/api/v1/agents"})
	r.expectProblem(t, http.StatusMethodNotAllowed, "method-not-allowed")
	if allow := r.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Fatalf("Allow %q", allow)
	}
	h.do(req{method: "POST", path: "/healthz"}).expectProblem(t, http.StatusMethodNotAllowed, "method-not-allowed")
}

// CORS: reads are open to any origin without credentials; writes are not.
func TestCORS(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	r := h.do(req{method: "GET", path: "/api/v1/agents", header: []string{"Origin", "https://elsewhere.example"}})
	r.expectStatus(t, http.StatusOK)
	if r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("GET CORS headers %v", r.header)
	}
	r = h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://cors.example.com/"}`),
		header: []string{"Origin", "https://elsewhere.example"}})
	r.expectStatus(t, http.StatusAccepted)
	if v := r.header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Fatalf("POST answered Access-Control-Allow-Origin %q", v)
	}
	// Preflights admit GET and HEAD only, also on a path that has POST.
	pre := func(method string) http.Header {
		hr, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, h.srv.URL+"/api/v1/agents", nil)
		hr.Header.Set("Origin", "https://elsewhere.example")
		hr.Header.Set("Access-Control-Request-Method", method)
		hr.Header.Set("Access-Control-Request-Headers", "authorization")
		res, err := h.srv.Client().Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("preflight %s: status %d", method, res.StatusCode)
		}
		return res.Header
	}
	g := pre("GET")
	if g.Get("Access-Control-Allow-Origin") != "*" || g.Get("Access-Control-Allow-Methods") != "GET, HEAD" ||
		!strings.Contains(g.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("GET preflight %v", g)
	}
	if p := pre("POST"); p.Get("Access-Control-Allow-Origin") != "" || p.Get("Access-Control-Allow-Methods") != "" {
		t.Fatalf("POST preflight admitted: %v", p)
	}
}

func TestRequestIDs(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	r := h.do(req{method: "GET", path: "/healthz"})
	if id := r.header.Get("X-Request-Id"); len(id) != 24 {
		t.Fatalf("generated id %q", id)
	}
	r = h.do(req{method: "GET", path: "/healthz", header: []string{"X-Request-Id", "lb-1234.abc"}})
	if id := r.header.Get("X-Request-Id"); id != "lb-1234.abc" {
		t.Fatalf("kept id %q", id)
	}
	// docs/threats.md I.81: an id that could forge log lines is replaced.
	r = h.do(req{method: "GET", path: "/healthz", header: []string{"X-Request-Id", "x\" level=ERROR msg=forged"}})
	if id := r.header.Get("X-Request-Id"); len(id) != 24 || strings.Contains(h.logs.String(), "forged") {
		t.Fatalf("id %q; logs:\n%s", id, h.logs.String())
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatal("no nosniff")
	}
}

// With Config.SearchReady, /readyz also reports the search index, naming
// the reason it is not ready.
func TestReadinessAsksSearch(t *testing.T) {
	var reason error = errors.New("search: index is being rebuilt")
	var mu sync.Mutex
	h := newHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.SearchReady = func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			return reason
		}
	})
	r := h.do(req{method: "GET", path: "/readyz"})
	p := r.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
	if p.Detail != "the search index is not ready: search: index is being rebuilt" || r.header.Get("Retry-After") != "5" {
		t.Fatalf("detail %q Retry-After %q", p.Detail, r.header.Get("Retry-After"))
	}
	mu.Lock()
	reason = nil
	mu.Unlock()
	h.do(req{method: "GET", path: "/readyz"}).expectStatus(t, http.StatusOK)
}
