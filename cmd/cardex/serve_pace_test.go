package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/pace"
)

// Reads and discovery queries are interactive; writes and operators'
// probes are not (serve_web.go interactive).
func TestInteractiveRequests(t *testing.T) {
	g := pace.New(pace.Options{})
	var marked, write bool
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		marked, write = g.Stats().InFlight == 1, g.Stats().Writes == 1
	})
	h := interactive(g, inner, []surface{{"a2a", []string{"/.well-known/agent-card.json", "/a2a/"}, inner}, {"mcp", []string{"/mcp"}, inner}})
	for _, tc := range []struct {
		req  string
		want bool
	}{
		{"GET /api/v1/agents?q=hotel", true},
		{"HEAD /agents/abc", true},
		{"GET /", true},
		{"POST /a2a/v1", true},
		{"POST /mcp", true},
		{"POST /ard/search", true},
		{"POST /ard/explore", true},
		{"POST /api/v1/agents", false},
		{"POST /api/v1/agents/bulk", false},
		{"POST /api/v1/agents/x/approve", false},
		{"POST /admin/agents/x/approve", false},
		{"DELETE /api/v1/tokens/x", false},
		{"GET /metrics", false},
		{"GET /healthz", false},
		{"GET /readyz", false},
	} {
		method, path, _ := strings.Cut(tc.req, " ")
		marked, write = false, false
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
		wantWrite := !tc.want && method != http.MethodGet
		if marked != tc.want || write != wantWrite {
			t.Errorf("%s: interactive %v, write %v; want %v, %v", tc.req, marked, write, tc.want, wantWrite)
		}
	}
	if g.Stats().InFlight != 0 || g.Stats().Writes != 0 {
		t.Errorf("%d requests still in flight", g.Stats().InFlight)
	}
}
