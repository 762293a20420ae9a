package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
)

// docs/threats.md G.72: an agent removed, hidden or suspended in SQL while the
// index still has it (no Sync after the change) never appears in a list,
// a search or a skills answer.
func TestSearchG72StaleIndexNeverShowsHiddenAgents(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)

		h.do(req{method: "DELETE", path: "/api/v1/agents/" + c.weather.ID, token: c.admin}).expectStatus(t, http.StatusOK)
		h.do(req{method: "POST", path: "/api/v1/agents/" + c.currency.ID + "/suspend", token: c.admin}).expectStatus(t, http.StatusOK)
		h.do(req{method: "PATCH", path: "/api/v1/agents/" + c.route.ID, token: c.admin, body: jsonBody(`{"visibility":"internal"}`)}).
			expectStatus(t, http.StatusOK)
		// The index still has the old state of all three.
		res, err := h.idx.Search(h.ctx(), search.Query{Scope: registry.ScopeOf(registry.Anonymous)})
		if err != nil || res.TotalSize != 3 {
			t.Fatalf("index is not stale as the test needs: %v %+v", err, res)
		}

		for _, q := range []string{"", "q=weather", "q=rainfall", "tag=weather", "tag=finance", "provider=acme", "sort=name"} {
			if got := h.list(q, "").ids(); len(got) != 0 {
				t.Errorf("anonymous %q lists %v from a stale index", q, got)
			}
		}
		if got := h.list("", c.reader).ids(); !slices.Equal(sortedIDs2(got), sortedIDs(c.route, c.storm)) {
			t.Errorf("reader lists %v", got)
		}
		admin := h.list("", c.admin).ids()
		if slices.Contains(admin, c.weather.ID) || len(admin) != 4 {
			t.Errorf("admin lists %v: the removed agent must not show", admin)
		}
		// A status filter is re-checked against SQL too.
		if got := h.list("status=approved", c.admin).ids(); !slices.Equal(sortedIDs2(got), sortedIDs(c.route, c.storm)) {
			t.Errorf("admin status=approved lists %v", got)
		}
		if p := h.skills("q=rainfall", ""); len(p.Skills) != 0 {
			t.Errorf("skills of a removed agent: %+v", p.Skills)
		}
		// Removed agents are still listed to admins, from SQL.
		if got := h.list("status=removed", c.admin).ids(); !slices.Equal(got, []string{c.weather.ID}) {
			t.Errorf("admin status=removed lists %v", got)
		}

		h.sync()
		if p := h.list("", ""); len(p.Agents) != 0 || p.TotalSize != 0 {
			t.Errorf("after sync anonymous lists %v (total %d)", p.ids(), p.TotalSize)
		}
		if p := h.list("", c.admin); p.TotalSize != 4 || len(p.Agents) != 4 {
			t.Errorf("after sync admin lists %d (total %d)", len(p.Agents), p.TotalSize)
		}
	})
}

// docs/threats.md G.71: hostile query text is answered 200 or 400, never 500,
// and within the query timeout.
func TestSearchG71HostileQueries(t *testing.T) {
	h := newSearchHarness(t, registrytest.SQLite(t))
	newCatalogue(h)
	hostile := []string{
		"*", "?", "a*", "*a*", "/.*/", "/(a+)+$/", `"unterminated`, `""`, "+-&&||!(){}[]^\"~*?:\\/",
		"name:*", "_id:x", "skills.name:forecast", "weather~2", "weather^1000", "AND OR NOT", "\x00", "\t\n\r",
		strings.Repeat("a ", 256), strings.Repeat("(", 512), strings.Repeat("weather ", 64),
		strings.Repeat("é", 256), "🙂🙂🙂", "<script>alert(1)</script>", "' OR 1=1 --",
		strings.Repeat("a", 513), "\xff\xfe", strings.Repeat("x", 100_000),
	}
	for _, q := range hostile {
		for _, path := range []string{"/api/v1/agents?q=", "/api/v1/skills?q="} {
			start := time.Now()
			r := h.do(req{method: "GET", path: path + url.QueryEscape(q)})
			if r.status != http.StatusOK && r.status != http.StatusBadRequest {
				t.Errorf("%s%.40q → %d: %s", path, q, r.status, r.body)
			}
			if r.status == http.StatusBadRequest {
				if p := r.problem(t); len(p.Errors) != 1 || p.Errors[0].Pointer != "/q" {
					t.Errorf("%.40q: errors %+v", q, p.Errors)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("%.40q took %s", q, d)
			}
		}
	}
	// Too many values of one filter, or an oversized value, is refused.
	many := strings.Repeat("tag=x&", search.MaxFilterValues+1)
	h.do(req{method: "GET", path: "/api/v1/agents?" + many}).expectProblem(t, http.StatusBadRequest, "validation-failed")
	h.do(req{method: "GET", path: "/api/v1/agents?provider=" + strings.Repeat("p", 513)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Fatalf("hostile queries logged errors:\n%s", h.logs.String())
	}
}

// Config.Search nil: the SQL listing stays; the search-only parts answer 503
// without Retry-After (retrying will not help).
func TestSearchNotConfigured(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	admin := h.token(registry.RoleAdmin)
	h.do(req{method: "GET", path: "/api/v1/agents?status=pending", token: admin}).expectStatus(t, http.StatusOK)
	for _, r := range []req{
		{method: "GET", path: "/api/v1/agents?q=weather"},
		{method: "GET", path: "/api/v1/agents?tag=maps"},
		{method: "GET", path: "/api/v1/agents?sort=relevance"},
		{method: "GET", path: "/api/v1/skills?q=weather"},
		{method: "GET", path: "/api/v1/tags"},
		{method: "POST", path: "/api/v1/admin/reindex", token: admin},
	} {
		res := h.do(r)
		res.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
		if ra := res.header.Get("Retry-After"); ra != "" {
			t.Errorf("%s: Retry-After %q", r.path, ra)
		}
	}
	var agents struct {
		Facets any `json:"facets"`
	}
	r := h.do(req{method: "GET", path: "/api/v1/agents"})
	r.json(t, &agents)
	if agents.Facets != nil {
		t.Fatalf("the SQL listing has no facets: %s", r.body)
	}
}

// An index still being built (G.69) answers 503 with Retry-After; so does a
// closed one.
func TestSearchNotReady(t *testing.T) {
	idx, err := search.Open(filepath.Join(t.TempDir(), "index"), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, registrytest.SQLite(t), func(cfg *Config) { cfg.Search = idx })
	for _, path := range []string{"/api/v1/agents", "/api/v1/agents?q=x", "/api/v1/skills", "/api/v1/tags"} {
		r := h.do(req{method: "GET", path: path})
		r.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
		if r.header.Get("Retry-After") != "5" {
			t.Fatalf("%s: Retry-After %q", path, r.header.Get("Retry-After"))
		}
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	h.do(req{method: "GET", path: "/api/v1/agents"}).expectProblem(t, http.StatusServiceUnavailable, "unavailable")
}

// POST /api/v1/admin/reindex: admin only; afterwards the same answers, plus
// what changed while the index was not following.
func TestSearchAdminReindex(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)
		before := map[string][]byte{}
		queries := []string{"", "q=weather", "tag=maps&sort=name", "q=route&capability=streaming"}
		for _, q := range queries {
			before[q] = h.do(req{method: "GET", path: "/api/v1/agents?" + q, token: c.reader}).body
		}
		h.do(req{method: "POST", path: "/api/v1/admin/reindex"}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		h.do(req{method: "POST", path: "/api/v1/admin/reindex", token: c.reader}).expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "POST", path: "/api/v1/admin/reindex", token: c.admin, body: jsonBody(`{"force":true}`)}).
			expectProblem(t, http.StatusBadRequest, "unknown-field")
		gen := h.idx.Status().Generation

		r := h.do(req{method: "POST", path: "/api/v1/admin/reindex", token: c.admin, body: jsonBody(`{}`)})
		r.expectStatus(t, http.StatusOK)
		if !strings.HasPrefix(string(r.body), `{"status":"rebuilt","durationMs":`) {
			t.Fatalf("body %s", r.body)
		}
		if now := h.idx.Status().Generation; now == gen {
			t.Fatalf("generation %s was not replaced", now)
		}
		for _, q := range queries {
			if after := h.do(req{method: "GET", path: "/api/v1/agents?" + q, token: c.reader}).body; string(after) != string(before[q]) {
				t.Errorf("%q changed across reindex:\n%s\n%s", q, before[q], after)
			}
		}
		// An approval the indexer never applied is searchable after a reindex.
		h.do(req{method: "POST", path: "/api/v1/agents/" + c.pendingOnly.ID + "/approve", token: c.admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectStatus(t, http.StatusOK)
		h.do(req{method: "POST", path: "/api/v1/admin/reindex", token: c.admin}).expectStatus(t, http.StatusOK)
		if got := h.list("q=pending", "").ids(); !slices.Equal(got, []string{c.pendingOnly.ID}) {
			t.Fatalf("after reindex q=pending lists %v", got)
		}
	})
}

// A failed rebuild is a 503 when the index is busy or closed, else a 500
// whose detail names only the request id.
func TestSearchAdminReindexFailure(t *testing.T) {
	h := newSearchHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.Reindex = func(context.Context) error { return search.ErrClosed }
	})
	admin := h.token(registry.RoleAdmin)
	r := h.do(req{method: "POST", path: "/api/v1/admin/reindex", token: admin})
	r.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
	h2 := newSearchHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.Reindex = func(context.Context) error { return errors.New("disk full") }
	})
	p := h2.do(req{method: "POST", path: "/api/v1/admin/reindex", token: h2.token(registry.RoleAdmin)}).
		expectProblem(t, http.StatusInternalServerError, "internal-error")
	if strings.Contains(p.Detail, "disk") {
		t.Fatalf("detail leaks the cause: %q", p.Detail)
	}
}

// Config.Kick runs after a successful submit, restore and crawl request
// only; Config.Observe sees every request once with its route template.
func TestKickAndObserve(t *testing.T) {
	var kicks atomic.Int64
	type obs struct {
		route  string
		status int
	}
	seen := make(chan obs, 64)
	h := newHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.Kick = func() { kicks.Add(1) }
		cfg.Observe = func(route string, status int, d time.Duration) {
			if d < 0 {
				t.Errorf("negative duration %s", d)
			}
			seen <- obs{route, status}
		}
	})
	admin := h.token(registry.RoleAdmin)
	a := h.submit("https://kick.example.com/", "")
	if kicks.Load() != 1 {
		t.Fatalf("%d kicks after submit", kicks.Load())
	}
	h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://kick.example.com/"}`)}).
		expectProblem(t, http.StatusConflict, "duplicate-agent")
	h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/crawl", token: admin, body: jsonBody(`{}`)}).expectStatus(t, http.StatusAccepted)
	h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/reject", token: admin}).expectStatus(t, http.StatusOK)
	h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/restore", token: admin}).expectStatus(t, http.StatusOK)
	if kicks.Load() != 3 {
		t.Fatalf("%d kicks, want 3 (submit, crawl, restore)", kicks.Load())
	}
	h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/no/such/route"}).expectStatus(t, http.StatusNotFound)
	var got []obs
	for len(seen) > 0 {
		got = append(got, <-seen)
	}
	// token creation is a direct Service call; 7 HTTP requests were made.
	if len(got) != 7 {
		t.Fatalf("%d observations: %+v", len(got), got)
	}
	if got[5] != (obs{"/api/v1/agents/:id", 200}) || got[1] != (obs{"/api/v1/agents", 409}) || got[6] != (obs{"", 404}) {
		t.Fatalf("observations %+v", got)
	}
}

// busySearcher answers every query with err, as an index out of query
// slots (search.ErrOverloaded) or past its deadline (search.ErrTimeout)
// does.
type busySearcher struct{ err error }

func (b busySearcher) Search(context.Context, search.Query) (*search.Result, error) {
	return nil, b.err
}
func (b busySearcher) Skills(context.Context, search.SkillQuery) (*search.SkillResult, error) {
	return nil, b.err
}
func (b busySearcher) Tags(context.Context, string, registry.Scope, int) ([]search.FacetValue, error) {
	return nil, b.err
}

// Overload degrades predictably: a query the index has no slot for answers
// 503 with Retry-After 1 at once; a query past its deadline 503 with
// Retry-After 5. Neither is a 500.
func TestSearchOverloadAnswers503(t *testing.T) {
	for _, c := range []struct {
		err   error
		retry string
	}{
		{fmt.Errorf("%w (64 waiting)", search.ErrOverloaded), "1"},
		{fmt.Errorf("%w after 2s", search.ErrTimeout), "5"},
	} {
		h := newHarness(t, registrytest.SQLite(t), func(cfg *Config) { cfg.Search = busySearcher{c.err} })
		for _, path := range []string{"/api/v1/agents?q=x", "/api/v1/skills?q=x"} {
			r := h.do(req{method: "GET", path: path})
			r.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
			if r.header.Get("Retry-After") != c.retry {
				t.Fatalf("%v %s: Retry-After %q, want %s", c.err, path, r.header.Get("Retry-After"), c.retry)
			}
		}
	}
}
