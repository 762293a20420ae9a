package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/discover/discovertest"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Protocol eras the server answers: the stateless revision, and the one
// with initialize that most clients still speak.
var eras = []string{"2026-07-28", "2025-11-25"}

type server struct {
	t   testing.TB
	f   *discovertest.Fixture
	srv *httptest.Server
}

func newServer(t testing.TB, store *registry.Store, opts ...func(*Config)) *server {
	t.Helper()
	f := discovertest.New(t, store)
	cfg := Config{Finder: f.Finder, Gate: &discover.Gate{Authenticate: f.Svc.Authenticate}}
	for _, o := range opts {
		o(&cfg)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, New(cfg))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &server{t: t, f: f, srv: srv}
}

func bearer(token string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// session connects the Go SDK's client in the given era.
func (s *server) session(t *testing.T, hc *http.Client, era string) *mcp.ClientSession {
	t.Helper()
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "cardex-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.srv.URL + Path, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool and decodes its structured content into out; it
// returns the result for IsError checks.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError && out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, b)
		}
		// The text copy says the same (clients that read only text).
		if len(res.Content) != 1 {
			t.Fatalf("%s: %d content items", name, len(res.Content))
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok || compact(t, tc.Text) != compact(t, string(b)) {
			t.Fatalf("%s: text copy differs: %v", name, res.Content[0])
		}
	}
	return res
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func errorText(res *mcp.CallToolResult) string {
	if !res.IsError || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func names(agents []discover.Agent) string {
	var out []string
	for _, a := range agents {
		out = append(out, a.Name)
	}
	return strings.Join(out, ",")
}

func TestTools(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := s.session(t, nil, era)
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range list.Tools {
				got = append(got, tool.Name)
				a := tool.Annotations
				if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint ||
					tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
					t.Errorf("tool %s: %+v", tool.Name, tool)
				}
			}
			if strings.Join(got, ",") != "get_agent,list_skills,list_tags,search_agents" {
				t.Fatalf("tools %v", got)
			}

			var page discover.Page
			call(t, cs, "search_agents", map[string]any{"q": "currency", "tag": []string{"finance"}}, &page)
			if names(page.Agents) != "FX Converter" || page.TotalSize != 1 || len(page.Facets.Tags) != 1 ||
				page.Facets.Tags[0].Value != "finance" || page.Facets.Tags[0].Count != 1 {
				t.Fatalf("search: %+v", page)
			}
			// A result carries the card's summary, not the card (docs/api.md
			// "Lists and search"); get_agent has the card.
			if fx := page.Agents[0]; fx.ID != s.f.FX.ID || fx.Card != nil || fx.Summary == nil || fx.Summary.Name != "FX Converter" ||
				fx.Summary.SkillCount != len(fx.Summary.Skills) || len(fx.MatchedSkills) != 1 {
				t.Fatalf("agent %+v", fx)
			}

			// Paging through the tool's own arguments.
			var p1, p2 discover.Page
			call(t, cs, "search_agents", map[string]any{"pageSize": 1}, &p1)
			if len(p1.Agents) != 1 || p1.TotalSize != 2 || p1.NextPageToken == "" {
				t.Fatalf("page 1: %+v", p1)
			}
			call(t, cs, "search_agents", map[string]any{"pageSize": 1, "pageToken": p1.NextPageToken}, &p2)
			if len(p2.Agents) != 1 || p2.NextPageToken != "" || p2.Agents[0].ID == p1.Agents[0].ID {
				t.Fatalf("page 2: %+v", p2)
			}

			var d discover.Detail
			call(t, cs, "get_agent", map[string]any{"id": s.f.Trips.ID}, &d)
			if d.Name != "Trip Planner" || d.Versions.Count != 1 || d.Versions.Current != 1 || d.Versions.Latest == nil ||
				d.Versions.Latest.Seq != 1 || !strings.HasSuffix(d.Versions.List, "/api/v1/agents/"+s.f.Trips.ID+"/versions") {
				t.Fatalf("get_agent: %+v", d)
			}

			var skills discover.SkillPage
			call(t, cs, "list_skills", map[string]any{"q": "ledgers"}, &skills)
			if len(skills.Skills) != 0 {
				t.Fatalf("an anonymous caller lists the internal agent's skill: %+v", skills)
			}
			call(t, cs, "list_skills", map[string]any{"q": "trip"}, &skills)
			if len(skills.Skills) != 1 || skills.Skills[0].SkillID != "book-trip" || skills.Skills[0].AgentID != s.f.Trips.ID {
				t.Fatalf("list_skills: %+v", skills)
			}

			var tags tagsOutput
			call(t, cs, "list_tags", map[string]any{}, &tags)
			b, _ := json.Marshal(tags)
			if string(b) != `{"tags":[{"value":"finance","count":1},{"value":"travel","count":1}]}` {
				t.Fatalf("list_tags: %s", b)
			}
		})
	}
}

// An internal agent never reaches an anonymous caller; a reader token
// sees it, like on the API.
func TestVisibility(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		s := newServer(t, store)
		for _, era := range eras {
			anon := s.session(t, nil, era)
			for _, args := range []map[string]any{{"q": "ledger"}, {"tag": []string{"finance"}}, {"skill": []string{"reconcile"}}, {"pageSize": 100}} {
				res := call(t, anon, "search_agents", args, nil)
				b, _ := json.Marshal(res)
				if strings.Contains(string(b), "Internal Ledger") || strings.Contains(string(b), "Pending Payments") {
					t.Fatalf("%s %v: %s", era, args, b)
				}
			}
			if res := call(t, anon, "get_agent", map[string]any{"id": s.f.Ledger.ID}, nil); errorText(res) != "no agent with this id" {
				t.Fatalf("%s: internal by id: %+v", era, res)
			}
			var tags tagsOutput
			call(t, anon, "list_tags", map[string]any{"prefix": "fin"}, &tags)
			if len(tags.Tags) != 1 || tags.Tags[0].Count != 1 {
				t.Fatalf("%s: tags %+v", era, tags)
			}

			reader := s.session(t, bearer(s.f.Reader), era)
			var page discover.Page
			call(t, reader, "search_agents", map[string]any{"tag": []string{"finance"}}, &page)
			if page.TotalSize != 2 || !strings.Contains(names(page.Agents), "Internal Ledger") {
				t.Fatalf("%s: reader: %+v", era, page)
			}
			var d discover.Detail
			call(t, reader, "get_agent", map[string]any{"id": s.f.Ledger.ID}, &d)
			if d.Name != "Internal Ledger" {
				t.Fatalf("%s: reader by id: %+v", era, d)
			}
		}
	})
}

func TestBadArguments(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	cs := s.session(t, nil, eras[0])
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search_agents", map[string]any{"trust": []string{"great"}}, `trust: "great" is not one of`},
		{"search_agents", map[string]any{"status": []string{"pending"}}, "admin token"},
		{"search_agents", map[string]any{"pageToken": "nope"}, "pageToken"},
		{"search_agents", map[string]any{"pageSize": 500}, "pageSize"},
		{"search_agents", map[string]any{"q": strings.Repeat("a", 600)}, "q: longer than"},
		{"get_agent", map[string]any{"id": ""}, "id is required"},
		{"get_agent", map[string]any{"id": "nope"}, "no agent"},
		{"list_tags", map[string]any{"limit": 5000}, "limit"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s %v: %v", tc.tool, tc.args, err)
		}
		if got := errorText(res); !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
	// Arguments the schema refuses (a wrong type) fail too.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_agents", Arguments: map[string]any{"tag": "finance"}})
	if err == nil && !res.IsError {
		t.Fatalf("a string for a list was accepted: %+v", res)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_agent", Arguments: map[string]any{}}); err == nil {
		t.Fatal("an unknown tool was called")
	}
}

// post sends one raw JSON-RPC message in the 2025-11-25 way.
func (s *server) post(body string, header ...string) (int, http.Header, string) {
	s.t.Helper()
	req, err := http.NewRequest("POST", s.srv.URL+Path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header, b.String()
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestTransportLimits(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s := newServer(t, registrytest.SQLite(t), func(c *Config) {
		c.Gate.Limits = ratelimit.NewLimiters(ratelimit.Limits{ReadPerAddress: ratelimit.Rate{N: 3, Per: 3 * time.Second}}, 0)
		c.Gate.Now = func() time.Time { return now }
	})
	if code, _, body := s.post(initialize); code != http.StatusOK || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) ||
		!strings.Contains(body, `"name":"cardex"`) {
		t.Fatalf("initialize: %d %s", code, body)
	}
	// The MCP transport's Origin rule: a page on another origin gets 403.
	if code, _, _ := s.post(initialize, "Origin", "https://evil.example.com", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Fatalf("foreign origin: %d", code)
	}
	if code, _, _ := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}}`); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d", code)
	}
	// The anonymous budget is spent (3 per 3 s on this clock): 429.
	code, h, _ := s.post(initialize)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
		t.Fatalf("over the budget: %d %v", code, h)
	}
	// A reader token reads on a budget of its own (docs/threats.md K.99),
	// an admin token is not limited; a bad one is 401.
	for i := range 3 {
		if code, _, _ := s.post(initialize, "Authorization", "Bearer "+s.f.Reader); code != http.StatusOK {
			t.Fatalf("with a token, request %d: %d", i, code)
		}
	}
	if code, h, _ := s.post(initialize, "Authorization", "Bearer "+s.f.Reader); code != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
		t.Fatalf("a reader token past its own budget: %d %v", code, h)
	}
	for range 5 {
		if code, _, _ := s.post(initialize, "Authorization", "Bearer "+s.f.Admin); code != http.StatusOK {
			t.Fatalf("with an admin token: %d", code)
		}
	}
	if code, h, _ := s.post(initialize, "Authorization", "Bearer cdx_nope"); code != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" {
		t.Fatalf("bad token: %d %v", code, h)
	}
}

func TestMalformedRequests(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"not JSON", `{"jsonrpc":`, http.StatusBadRequest, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":2,"method":"tools/destroy","params":{}}`, http.StatusBadRequest, "unsupported"},
		{"batch", `[` + initialize + `]`, http.StatusBadRequest, ""},
	} {
		code, _, body := s.post(tc.body, "MCP-Protocol-Version", "2025-11-25")
		if (tc.status != 0 && code != tc.status) || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s", tc.name, code, body)
		}
	}
	req, _ := http.NewRequest("GET", s.srv.URL+Path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

// With a base URL (a reverse proxy in front, possibly on the same machine)
// the public name is accepted on a loopback connection; other names are not.
func TestHostRule(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t), func(c *Config) { c.BaseURL = "https://cardex.example.com" })
	for host, want := range map[string]int{"cardex.example.com": 200, s.srv.Listener.Addr().String(): 200, "evil.example.com": 403} {
		req, _ := http.NewRequest("POST", s.srv.URL+Path, strings.NewReader(initialize))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// One page-size rule on every face (docs/api.md "Page sizes"): the input
// schemas declare 1 to 100, absent is 20, and 0, a negative size or more
// than 100 is a tool error, never the default or the maximum.
func TestPageSizeRule(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	for _, era := range eras {
		cs := s.session(t, nil, era)
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		declared := 0
		for _, tool := range tools.Tools {
			if tool.Name != "search_agents" && tool.Name != "list_skills" {
				continue
			}
			b, _ := json.Marshal(tool.InputSchema)
			var schema struct {
				Properties map[string]struct {
					Type    any      `json:"type"`
					Minimum *float64 `json:"minimum"`
					Maximum *float64 `json:"maximum"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
			ps := schema.Properties["pageSize"]
			if ps.Type != "integer" || ps.Minimum == nil || *ps.Minimum != 1 || ps.Maximum == nil || *ps.Maximum != 100 {
				t.Fatalf("%s: pageSize schema %s", tool.Name, b)
			}
			declared++
		}
		if declared != 2 {
			t.Fatalf("%d tools declare pageSize", declared)
		}
		for _, tool := range []string{"search_agents", "list_skills"} {
			for _, size := range []int{0, -1, 101} {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"q": "ledger", "pageSize": size}})
				if err == nil && (!res.IsError || !strings.Contains(errorText(res), "pageSize")) {
					t.Fatalf("%s %s pageSize %d: %+v", era, tool, size, res)
				}
			}
			for _, args := range []map[string]any{{"q": "ledger"}, {"q": "ledger", "pageSize": 1}, {"q": "ledger", "pageSize": 100}} {
				if res := call(t, cs, tool, args, nil); res.IsError {
					t.Fatalf("%s %s %v: %s", era, tool, args, errorText(res))
				}
			}
		}
	}
}

// The server and its tool schemas are built once, not per request
// (docs/threats.md K.96): answering tools/list allocates a small fraction
// of what building the server with its four tools' schemas does.
func TestServerBuiltOnce(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	h := s.srv.Config.Handler
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	serve := func() {
		req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"search_agents"`) {
			t.Fatalf("tools/list: %d %s", rec.Code, rec.Body)
		}
	}
	perRequest := testing.AllocsPerRun(20, serve)
	build := testing.AllocsPerRun(5, func() { (&tools{}).server("1") })
	t.Logf("tools/list: %.0f allocations; building the server: %.0f", perRequest, build)
	if perRequest >= build {
		t.Fatalf("tools/list allocates %.0f, building the server %.0f: the server is built per request", perRequest, build)
	}
}

// An anonymous search spends the read budget by the results it asks for,
// as on the API (docs/threats.md K.96): with a burst of 10, two
// search_agents calls of pageSize 100 (five units each) empty it, and the
// next one is refused.
func TestSearchChargesByPageSize(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t), func(c *Config) {
		c.Gate.Limits = ratelimit.NewLimiters(ratelimit.Limits{ReadPerAddress: ratelimit.Rate{N: 1, Per: time.Hour, Burst: 10}}, 0)
	})
	search := func(size int) (int, string) {
		code, _, body := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_agents","arguments":{"pageSize":%d}}}`, size),
			"Mcp-Protocol-Version", "2025-11-25")
		return code, body
	}
	for range 2 {
		if code, body := search(100); code != http.StatusOK || strings.Contains(body, `"isError":true`) {
			t.Fatalf("%d %s", code, body)
		}
	}
	if code, body := search(100); code != http.StatusTooManyRequests {
		t.Fatalf("third page of 100: %d %s", code, body)
	}
	// The charge past the request's own unit is a tool error when the
	// budget has some units left but not enough.
	s2 := newServer(t, registrytest.SQLite(t), func(c *Config) {
		c.Gate.Limits = ratelimit.NewLimiters(ratelimit.Limits{ReadPerAddress: ratelimit.Rate{N: 1, Per: time.Hour, Burst: 3}}, 0)
	})
	code, _, body := s2.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_agents","arguments":{"pageSize":100}}}`,
		"Mcp-Protocol-Version", "2025-11-25")
	if code != http.StatusOK || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "smaller pages") {
		t.Fatalf("page of 100 over a budget of 3: %d %s", code, body)
	}
	code, _, body = s2.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_agents","arguments":{"pageSize":20}}}`,
		"Mcp-Protocol-Version", "2025-11-25")
	if code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("page of 20 after the refusal: %d %s", code, body)
	}
}
