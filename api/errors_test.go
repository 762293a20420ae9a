package api

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// Every registry error maps to its documented problem; anything else is an
// internal error whose detail names only the request id.
func TestErrorTable(t *testing.T) {
	cases := []struct {
		err    error
		status int
		slug   string
	}{
		{registry.ErrNotFound, 404, "not-found"},
		{fmt.Errorf("get: %w", registry.ErrForbidden), 403, "forbidden"},
		{registry.ErrUnauthorized, 401, "unauthorized"},
		{registry.ErrInvalidTransition, 409, "invalid-transition"},
		{registry.ErrAgentRemoved, 409, "agent-removed"},
		{&registry.DuplicateError{AgentID: "abc"}, 409, "duplicate-agent"},
		{&registry.VersionConflictError{CurrentVersionSeq: 4}, 409, "version-conflict"},
		{&registry.URLError{Code: registry.URLCodeInvalid, Reason: "no"}, 400, "invalid-url"},
		{&registry.URLError{Code: registry.URLCodeReserved, Reason: "loopback"}, 400, "reserved-address"},
		{&registry.ValidationError{Errors: []registry.FieldError{{Pointer: "/x", Code: "c", Message: "m"}}}, 400, "validation-failed"},
		{registry.ErrInvalidPageToken, 400, "validation-failed"},
		{fmt.Errorf("write: %w", registry.ErrUnavailable), 503, "unavailable"},
		{errors.New("pq: password authentication failed for user cardex at 10.1.2.3"), 500, "internal-error"},
	}
	for _, tc := range cases {
		p := toProblem(tc.err, "req-1")
		if p.Status != tc.status || p.Type != "/problems/"+tc.slug || p.Title == "" || p.Detail == "" {
			t.Errorf("%v → %+v, want %d %s", tc.err, p, tc.status, tc.slug)
		}
	}
	if p := toProblem(&registry.DuplicateError{AgentID: "abc"}, ""); p.AgentID != "abc" {
		t.Errorf("agentId %q", p.AgentID)
	}
	if p := toProblem(&registry.VersionConflictError{CurrentVersionSeq: 4}, ""); p.CurrentVersionSeq == nil || *p.CurrentVersionSeq != 4 {
		t.Errorf("currentVersionSeq %v", p.CurrentVersionSeq)
	}
	if p := toProblem(registry.ErrUnavailable, ""); p.retryAfter != unavailableRetry {
		t.Errorf("retryAfter %d", p.retryAfter)
	}
	p := toProblem(errors.New("pq: password authentication failed for user cardex at 10.1.2.3"), "req-1")
	if p.Detail != "internal error; request id req-1" || strings.Contains(p.Detail, "pq") {
		t.Errorf("internal detail leaks: %q", p.Detail)
	}
}

// A failing handler over HTTP: 500 problem+json that names the request id,
// with the cause in the log and not in the body.
func TestInternalErrorOverHTTP(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		a := h.submit("https://internal-error.example.com/", "")
		// A closed store fails the Service with database/sql's own error.
		store.Close()
		r := h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID})
		p := r.expectProblem(t, http.StatusInternalServerError, "internal-error")
		rid := r.header.Get("X-Request-Id")
		if p.Detail != "internal error; request id "+rid {
			t.Fatalf("detail %q", p.Detail)
		}
		logs := h.logs.String()
		if !strings.Contains(logs, "request_id="+rid) || !strings.Contains(logs, "database is closed") {
			t.Fatalf("the cause is not logged with the request id:\n%s", logs)
		}
	})
}

// docs/threats.md F.63: when another process holds SQLite's write lock past
// the busy wait, the client gets 503 with Retry-After, not 500, and nothing
// is half-written.
func TestBusyDatabaseIs503(t *testing.T) {
	dir := t.TempDir()
	store, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir, BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := newHarness(t, store)
	other, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "cardex.db")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(h.ctx(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://busy.example.com/"}`)})
	r.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
	if r.header.Get("Retry-After") != "5" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	assertNothingStored(t, h)
	h.submit("https://busy.example.com/", "")
}

// A panicking handler is answered with a 500 problem and logged; the
// process keeps serving.
func TestPanicIsRecovered(t *testing.T) {
	logs := &syncBuffer{}
	s := &server{log: slog.New(slog.NewTextHandler(logs, nil))}
	e := echo.New()
	e.HTTPErrorHandler = s.handleError
	e.Use(s.observe)
	e.GET("/boom", func(echo.Context) error { panic("boom") })
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != "application/problem+json" ||
		!strings.Contains(rec.Body.String(), `"type":"/problems/internal-error"`) || strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("%d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if !strings.Contains(logs.String(), "panic: boom") {
		t.Fatalf("panic not logged:\n%s", logs)
	}
}
