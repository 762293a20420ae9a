package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// visSite is a loopback web server on one address, answering the paths a
// test sets.
type visSite struct {
	url   string
	mu    sync.Mutex
	paths map[string]string
}

func newVisSite(t *testing.T, addr string) *visSite {
	t.Helper()
	s := &visSite{paths: map[string]string{}}
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.paths[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *visSite) serve(path, body string) {
	s.mu.Lock()
	s.paths[path] = body
	s.mu.Unlock()
}

// visCard is a card whose name, skill and tag carry the word "zephyr" and
// the agent's own name.
func visCard(name string) string {
	return fmt.Sprintf(`{"name":"Zephyr %[1]s","description":"zephyr agent %[1]s","version":"1.0.0",`+
		`"supportedInterfaces":[{"url":"http://127.0.0.1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],`+
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],`+
		`"skills":[{"id":"zephyr-%[1]s","name":"Zephyr %[1]s","description":"zephyr skill of %[1]s","tags":["zephyr-%[1]s"]}]}`, name)
}

// bearer adds a bearer token to every request (the MCP client's).
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b != "" {
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// call sends one request and returns its status and body.
func call(t *testing.T, method, u, token, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// TestServeVisibilityEveryFace (docs/threats.md K.95 and K.103) is who sees
// what, face by face, through the whole server: a publisher token that a
// host claim issued on 127.0.0.1 sees what an anonymous caller sees plus
// 127.0.0.1's agents, never 127.0.0.2's internal one, on the API (list,
// search, record, card, versions, probes, fetches, skills, tags, changes), MCP
// (search_agents, get_agent), A2A (find-agents) and, for anonymous
// callers, the web pages; an operator-made publisher token sees the same,
// a reader token adds internal agents, an admin sees everything. The
// change feed names only agents the caller could list at some point.
func TestServeVisibilityEveryFace(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) { visibilityEveryFace(t, store) })
	}
}

func visibilityEveryFace(t *testing.T, store string) {
	own, other := newVisSite(t, "127.0.0.1"), newVisSite(t, "127.0.0.2")
	data, storeArgs, token := migratedStore(t, store)
	admin, reader := token("--role", "admin"), token("--role", "reader")
	operatorPub := token("--role", "publisher", "--host", "127.0.0.1")
	s := startInProcess(t, data, slices.Concat([]string{"--allow-networks", "127.0.0.0/8", "--allow-insecure-http",
		"--crawl-tick", "1s", "--read-rate", "0"}, storeArgs)...)

	// A stranger claims 127.0.0.1 (the port its site listens on) and gets
	// a publisher token.
	var claim struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	host := strings.TrimPrefix(own.url, "http://")
	if code := post(t, s.base+"/api/v1/claims", "", `{"host":"`+host+`","scheme":"http"}`, &claim); code != http.StatusCreated {
		t.Fatalf("claim: %d", code)
	}
	own.serve("/.well-known/cardex-claim/"+claim.Token, claim.Token)
	var claimed struct {
		PublisherToken string `json:"publisherToken"`
	}
	if code := post(t, s.base+"/api/v1/claims/"+claim.ID+"/verify", "", `{}`, &claimed); code != http.StatusOK || claimed.PublisherToken == "" {
		t.Fatalf("verify: %d %+v", code, claimed)
	}
	claimPub := claimed.PublisherToken

	// The agents: on 127.0.0.1 an internal approved one (owlet) and a
	// pending one (ocelot); on 127.0.0.2 an internal (otter) and a public
	// (osprey) approved one, an internal one approved then removed (orca)
	// and a pending one removed (oriole).
	id := map[string]string{}
	submit := func(site *visSite, name, vis string, approve bool) {
		t.Helper()
		site.serve("/"+name+".json", visCard(name))
		var rec struct {
			ID         string `json:"id"`
			VersionSeq int64  `json:"versionSeq"`
		}
		body := fmt.Sprintf(`{"cardUrl":%q,"visibility":%q}`, site.url+"/"+name+".json", vis)
		if code := post(t, s.base+"/api/v1/agents", admin, body, &rec); code != http.StatusAccepted {
			t.Fatalf("submit %s: %d", name, code)
		}
		id[name] = rec.ID
		polltest.Until(t, name+"'s first crawl", 20*time.Second, func() bool {
			_, _, b := get(t, s.base+"/api/v1/agents/"+rec.ID, admin)
			json.Unmarshal([]byte(b), &rec)
			return rec.VersionSeq > 0
		})
		if approve {
			if code := post(t, s.base+"/api/v1/agents/"+rec.ID+"/approve", admin, `{"versionSeq":1}`, nil); code != http.StatusOK {
				t.Fatalf("approve %s: %d", name, code)
			}
		}
	}
	remove := func(name string) {
		t.Helper()
		if code, b := call(t, http.MethodDelete, s.base+"/api/v1/agents/"+id[name], admin, ""); code != http.StatusOK {
			t.Fatalf("remove %s: %d %s", name, code, b)
		}
	}
	submit(own, "owlet", "internal", true)
	submit(own, "ocelot", "public", false)
	submit(other, "otter", "internal", true)
	submit(other, "osprey", "public", true)
	submit(other, "oriole", "public", false)
	submit(other, "orca", "internal", true)
	// The index follows the log in order: once it counts orca's tag,
	// orca being approved last, and then no longer counts it, orca being
	// removed last, it has applied every change before. (Tags are counted
	// by the index alone; search hits are re-checked against SQL, so they
	// would not tell.)
	inIndex := func(name string) bool {
		_, _, b := get(t, s.base+"/api/v1/tags?prefix=zephyr-"+name, admin)
		return strings.Contains(b, `"zephyr-`+name+`"`)
	}
	polltest.Until(t, "orca in the index", 20*time.Second, func() bool { return inIndex("orca") })
	remove("oriole")
	remove("orca")
	polltest.Until(t, "orca out of the index", 20*time.Second, func() bool { return !inIndex("orca") })

	all := []string{"owlet", "ocelot", "otter", "osprey", "oriole", "orca"}
	type caller struct {
		name, token string
		lists       []string       // lists and searches
		feed        []string       // agents the change feed names
		reads       []string       // readable by id
		fetches     map[string]int // status of /fetches, per agent
		fetchesElse int            // … for agents not in fetches
	}
	// A publisher reads the trace of its own hosts' agents; another
	// host's agent it may read is 403, one it may not read 404.
	ownFetches := map[string]int{"owlet": 200, "ocelot": 200, "osprey": 403}
	callers := []caller{
		{"anonymous", "", []string{"osprey"}, []string{"osprey"}, []string{"osprey", "ocelot"}, nil, 401},
		{"claim token", claimPub, []string{"osprey", "owlet", "ocelot"}, []string{"osprey", "owlet", "ocelot"},
			[]string{"osprey", "owlet", "ocelot"}, ownFetches, 404},
		{"operator publisher", operatorPub, []string{"osprey", "owlet", "ocelot"}, []string{"osprey", "owlet", "ocelot"},
			[]string{"osprey", "owlet", "ocelot"}, ownFetches, 404},
		{"reader", reader, []string{"osprey", "owlet", "otter"}, []string{"osprey", "owlet", "otter", "orca"},
			[]string{"osprey", "owlet", "otter", "ocelot"}, nil, 403},
		{"admin", admin, []string{"osprey", "owlet", "otter", "ocelot"}, all, all, nil, 200},
	}
	// names lists which of the agents body names, by the needle by gives.
	byID := func(n string) string { return id[n] }
	byTag := func(n string) string { return "zephyr-" + n }
	byCardURL := func(n string) string { return "/" + n + ".json" }
	names := func(body string, by func(string) string) []string {
		var out []string
		for _, n := range all {
			if strings.Contains(body, by(n)) {
				out = append(out, n)
			}
		}
		return out
	}
	same := func(a, b []string) bool {
		a, b = slices.Clone(a), slices.Clone(b)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			mc := mcp.NewClient(&mcp.Implementation{Name: "visibility-test", Version: "1"}, nil)
			cs, err := mc.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp",
				HTTPClient: &http.Client{Transport: bearer(c.token)}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tool := func(name string, args map[string]any) (string, bool) {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				b, _ := json.Marshal(res.StructuredContent)
				return string(b), res.IsError
			}
			a2a := func(text string) string {
				body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}}`
				code, b := call(t, http.MethodPost, s.base+"/a2a/jsonrpc", c.token, body, "A2A-Version", "1.0")
				if code != http.StatusOK || strings.Contains(b, `"error"`) {
					t.Fatalf("a2a: %d %s", code, b)
				}
				return b
			}
			body := func(path string) string {
				code, b := call(t, http.MethodGet, s.base+path, c.token, "")
				if code != http.StatusOK {
					t.Fatalf("%s: %d %s", path, code, b)
				}
				return b
			}
			// Listing faces.
			mcpSearch, _ := tool("search_agents", map[string]any{"q": "zephyr", "pageSize": 100})
			for _, f := range []struct {
				face string
				body string
				by   func(string) string
				want []string
			}{
				{"api list", body("/api/v1/agents?pageSize=100"), byID, c.lists},
				{"api search", body("/api/v1/agents?q=zephyr&pageSize=100"), byID, c.lists},
				{"api skills", body("/api/v1/skills?q=zephyr&pageSize=100"), byID, c.lists},
				{"api tags", body("/api/v1/tags?prefix=zephyr"), byTag, c.lists},
				{"api changes", body("/api/v1/changes?limit=1000"), byID, c.feed},
				{"mcp search_agents", mcpSearch, byID, c.lists},
				{"a2a find-agents", a2a("zephyr"), byID, c.lists},
			} {
				if got := names(f.body, f.by); !same(got, f.want) {
					t.Errorf("%s lists %v, want %v", f.face, got, f.want)
				}
			}
			// Reading by id.
			for _, n := range all {
				want := http.StatusNotFound
				if slices.Contains(c.reads, n) {
					want = http.StatusOK
				}
				for _, p := range []string{"", "/card", "/versions", "/versions/1", "/probes"} {
					if code, b := call(t, http.MethodGet, s.base+"/api/v1/agents/"+id[n]+p, c.token, ""); code != want {
						t.Errorf("GET %s%s: %d, want %d: %.200s", n, p, code, want, b)
					}
				}
				if b, isErr := tool("get_agent", map[string]any{"id": id[n]}); isErr == (want == http.StatusOK) {
					t.Errorf("mcp get_agent %s: error %t, want readable %t: %.200s", n, isErr, want == http.StatusOK, b)
				}
				wantFetches, ok := c.fetches[n]
				if !ok {
					wantFetches = c.fetchesElse
				}
				if code, _ := call(t, http.MethodGet, s.base+"/api/v1/agents/"+id[n]+"/fetches", c.token, ""); code != wantFetches {
					t.Errorf("GET %s/fetches: %d, want %d", n, code, wantFetches)
				}
			}
			if c.token != "" {
				return
			}
			// The web pages (sessions are for admins: everyone else is
			// anonymous there).
			for _, f := range []struct {
				face string
				path string
				by   func(string) string
			}{{"web catalogue", "/?q=zephyr", byID}, {"web tags", "/tags", byTag}, {"ai-catalog", "/.well-known/ai-catalog.json", byCardURL}} {
				if got := names(body(f.path), f.by); !same(got, c.lists) {
					t.Errorf("%s lists %v, want %v", f.face, got, c.lists)
				}
			}
			for _, n := range all {
				want := http.StatusNotFound
				if slices.Contains(c.reads, n) {
					want = http.StatusOK
				}
				if code, _ := call(t, http.MethodGet, s.base+"/agents/"+id[n], "", ""); code != want {
					t.Errorf("web agent page %s: %d, want %d", n, code, want)
				}
			}
		})
	}
}

// migratedStore is a fresh data directory (and, for "postgres", a fresh
// database) migrated by `cardex migrate`, with storeArgs for every later
// command and token, which makes a token with `cardex token create` and
// returns its secret: the set-up of the whole-server tests over both stores.
func migratedStore(t *testing.T, store string) (data string, storeArgs []string, token func(args ...string) string) {
	t.Helper()
	data = filepath.Join(t.TempDir(), "data")
	if store == "postgres" {
		storeArgs = []string{"--database-url", registrytest.PostgresURL(t)}
	}
	if code, _, stderr := runCLI(t, "", slices.Concat([]string{"migrate", "--data", data}, storeArgs)...); code != exitOK {
		t.Fatalf("migrate: %d %s", code, stderr)
	}
	token = func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", slices.Concat([]string{"token", "create", "--data", data}, args, storeArgs)...)
		if code != exitOK {
			t.Fatalf("token create %v: %d %s", args, code, stderr)
		}
		return strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0])
	}
	return data, storeArgs, token
}
