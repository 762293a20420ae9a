package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/identity/identitytest"
	"github.com/cardexhq/cardex/internal/polltest"
)

// groupCaller is one kind of caller of TestServeGroupsEveryFace: decorate
// makes a request its own (a header, a cookie), so a caller who signs in
// another way is one more entry.
type groupCaller struct {
	name     string
	decorate func(*http.Request)
	sees     []string // listed and read on the API, MCP and A2A; named by the change feed
	web      []string // listed and read on the web pages
}

// decorated is an http.RoundTripper sending every request as a caller (the
// MCP client's).
type decorated func(*http.Request)

func (d decorated) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	d(r)
	return http.DefaultTransport.RoundTrip(r)
}

// grpCard is a card whose name, description and skill carry the word
// "grpx", tagged "grpx" and "grpx-<name>".
func grpCard(name string) string {
	return fmt.Sprintf(`{"name":"Grpx %[1]s","description":"grpx agent %[1]s","version":"1.0.0",`+
		`"supportedInterfaces":[{"url":"http://127.0.0.1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],`+
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],`+
		`"skills":[{"id":"grpx-%[1]s","name":"Grpx %[1]s","description":"grpx skill of %[1]s","tags":["grpx","grpx-%[1]s"]}]}`, name)
}

// TestServeGroupsEveryFace (docs/security.md "Agents for groups") is who
// sees an agent for groups, face by face, through the whole server, on
// both databases: the API (list, search, record, card, versions, skills,
// tags, facet counts, changes), MCP (search_agents, get_agent), A2A
// (find-agents), the web catalogue and agent pages, and the AI Catalog,
// for an anonymous caller, a reader token without groups, reader tokens
// holding "payments" or "risk", a publisher token of another host and one
// of the agents' host, an admin (token, and session on the web), and
// people signed in with a real OpenID Provider (JWT access tokens on the
// API, MCP and A2A, their web session on the pages) in "payments", in
// "risk", in no group and in the admin group. Groups match exactly: the
// agent for "Payments" is nobody's but the admins'.
func TestServeGroupsEveryFace(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) { groupsEveryFace(t, store) })
	}
}

func groupsEveryFace(t *testing.T, store string) {
	site := newVisSite(t, "127.0.0.1")
	data, storeArgs, token := migratedStore(t, store)
	admin, reader := token("--role", "admin"), token("--role", "reader")
	payments := token("--role", "reader", "--groups", "payments")
	risk := token("--role", "reader", "--groups", "risk")
	pub := token("--role", "publisher", "--host", "127.0.0.2")
	owner := token("--role", "publisher", "--host", "127.0.0.1")
	// People signed in with the identity provider (docs/identity.md): an
	// admin by group, readers in "payments", in "risk" and in no group.
	// The provider is a real OpenID Provider on loopback
	// (identity/identitytest); Cardex's base URL is its redirect URI's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	op := identitytest.Start(t, base+"/auth/oidc/callback", base+"/",
		identitytest.User{ID: "u-olga", Username: "olga", Email: "olga@example.com", Groups: []string{"/cardex-admins"}},
		identitytest.User{ID: "u-pat", Username: "pat", Email: "pat@example.com", Groups: []string{"payments"}},
		identitytest.User{ID: "u-rick", Username: "rick", Email: "rick@example.com", Groups: []string{"risk"}},
		identitytest.User{ID: "u-nora", Username: "nora", Email: "nora@example.com"})
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(identitytest.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startInProcess(t, data, slices.Concat([]string{"--addr", addr, "--base-url", base, "--allow-networks", "127.0.0.0/8", "--allow-insecure-http",
		"--crawl-tick", "1s", "--read-rate", "0",
		"--oidc-issuer", op.Issuer, "--oidc-client-id", identitytest.ClientID, "--oidc-client-secret-file", secret,
		"--oidc-admin-groups", "/cardex-admins", "--oidc-audience", "cardex-api"}, storeArgs)...)

	// The agents, all approved: payroll for "payments", riskbot for
	// "risk", casebot for "Payments" (another group: names are compared
	// exactly), pangolin internal and pelican public. Each is made what it
	// is before its approval, so nobody could list it before.
	id := map[string]string{}
	add := func(name, vis string, groups ...string) {
		t.Helper()
		site.serve("/"+name+".json", grpCard(name))
		var rec struct {
			ID         string `json:"id"`
			VersionSeq int64  `json:"versionSeq"`
		}
		if code := post(t, s.base+"/api/v1/agents", admin, fmt.Sprintf(`{"cardUrl":%q}`, site.url+"/"+name+".json"), &rec); code != http.StatusAccepted {
			t.Fatalf("submit %s: %d", name, code)
		}
		id[name] = rec.ID
		polltest.Until(t, name+"'s first crawl", 20*time.Second, func() bool {
			_, _, b := get(t, s.base+"/api/v1/agents/"+rec.ID, admin)
			json.Unmarshal([]byte(b), &rec)
			return rec.VersionSeq > 0
		})
		body := fmt.Sprintf(`{"visibility":%q}`, vis)
		if len(groups) > 0 {
			g, _ := json.Marshal(groups)
			body = fmt.Sprintf(`{"visibility":%q,"groups":%s}`, vis, g)
		}
		if code, b := call(t, http.MethodPatch, s.base+"/api/v1/agents/"+rec.ID, admin, body); code != http.StatusOK {
			t.Fatalf("patch %s: %d %s", name, code, b)
		}
		if code := post(t, s.base+"/api/v1/agents/"+rec.ID+"/approve", admin, `{"versionSeq":1}`, nil); code != http.StatusOK {
			t.Fatalf("approve %s: %d", name, code)
		}
	}
	add("payroll", "groups", "payments")
	add("riskbot", "groups", "risk")
	add("casebot", "groups", "Payments")
	add("pangolin", "internal")
	add("pelican", "public")
	// The index follows the log in order: once anonymous callers count
	// pelican's tag, approved last, it has applied every change before.
	polltest.Until(t, "pelican in the index", 20*time.Second, func() bool {
		_, _, b := get(t, s.base+"/api/v1/tags?prefix=grpx-pelican", "")
		return strings.Contains(b, `"grpx-pelican"`)
	})

	// An admin's web session.
	form := "token=" + admin
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/admin/login", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) == 0 {
		t.Fatalf("admin sign-in: %d %v", res.StatusCode, res.Cookies())
	}
	session := res.Cookies()[0]

	// Each person holds a JWT access token for the API, MCP and A2A, and a
	// web session from the sign-in flow: the sign-in link, the provider's
	// login form, the callback.
	person := func(user string) func(*http.Request) {
		t.Helper()
		id, sec := op.AddService("u-"+user, "cardex-api")
		jwt := op.AccessToken(t, id, sec)
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := c.Get(s.base + "/auth/oidc/login")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		back := op.SignIn(t, c, res.Header.Get("Location"), user)
		if res, err = c.Get(back); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		u, _ := url.Parse(s.base)
		cookies := jar.Cookies(u)
		if res.StatusCode != http.StatusOK || len(cookies) == 0 {
			t.Fatalf("%s's sign-in: %d %v", user, res.StatusCode, cookies)
		}
		return func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+jwt)
			for _, ck := range cookies {
				r.AddCookie(ck)
			}
		}
	}

	all := []string{"payroll", "riskbot", "casebot", "pangolin", "pelican"}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) {
			if tok != "" {
				r.Header.Set("Authorization", "Bearer "+tok)
			}
		}
	}
	anon := []string{"pelican"}
	// Web sessions are for admins: every other caller is anonymous there.
	callers := []groupCaller{
		{"anonymous", bearer(""), anon, anon},
		{"reader", bearer(reader), []string{"pelican", "pangolin"}, anon},
		{"reader payments", bearer(payments), []string{"pelican", "pangolin", "payroll"}, anon},
		{"reader risk", bearer(risk), []string{"pelican", "pangolin", "riskbot"}, anon},
		{"publisher", bearer(pub), anon, anon},
		// Its host's publisher token lists and reads every agent of its
		// host, groups or not, as it does internal ones.
		{"publisher of their host", bearer(owner), all, anon},
		{"admin", func(r *http.Request) { bearer(admin)(r); r.AddCookie(session) }, all, all},
		// People signed in with the provider see what a token of their
		// role and groups sees, on the web pages too.
		{"person in payments", person("pat"), []string{"pelican", "pangolin", "payroll"}, []string{"pelican", "pangolin", "payroll"}},
		{"person in risk", person("rick"), []string{"pelican", "pangolin", "riskbot"}, []string{"pelican", "pangolin", "riskbot"}},
		{"person in no group", person("nora"), []string{"pelican", "pangolin"}, []string{"pelican", "pangolin"}},
		{"person in the admin group", person("olga"), all, all},
	}
	byID := func(n string) string { return id[n] }
	byTag := func(n string) string { return `"grpx-` + n + `"` }
	byCardURL := func(n string) string { return "/" + n + ".json" }
	names := func(body string, by func(string) string) []string {
		var out []string
		for _, n := range all {
			if strings.Contains(body, by(n)) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(v []string) []string { v = slices.Clone(v); slices.Sort(v); return v }
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			do := func(method, path, body string, header ...string) (int, string) {
				t.Helper()
				req, err := http.NewRequestWithContext(t.Context(), method, s.base+path, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				c.decorate(req)
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
			body := func(path string) string {
				t.Helper()
				code, b := do(http.MethodGet, path, "")
				if code != http.StatusOK {
					t.Fatalf("%s: %d %.300s", path, code, b)
				}
				return b
			}
			mc := mcp.NewClient(&mcp.Implementation{Name: "groups-test", Version: "1"}, nil)
			cs, err := mc.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp",
				HTTPClient: &http.Client{Transport: decorated(c.decorate)}}, nil)
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
			a2aBody := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"grpx"}]}}}`
			code, a2a := do(http.MethodPost, "/a2a/jsonrpc", a2aBody, "A2A-Version", "1.0")
			if code != http.StatusOK || strings.Contains(a2a, `"error"`) {
				t.Fatalf("a2a: %d %s", code, a2a)
			}
			mcpSearch, _ := tool("search_agents", map[string]any{"q": "grpx", "pageSize": 100})

			// Listing faces.
			for _, f := range []struct {
				face string
				body string
				by   func(string) string
				want []string
			}{
				{"api list", body("/api/v1/agents?pageSize=100"), byID, c.sees},
				{"api search", body("/api/v1/agents?q=grpx&pageSize=100"), byID, c.sees},
				{"api skills", body("/api/v1/skills?q=grpx&pageSize=100"), byID, c.sees},
				{"api tags", body("/api/v1/tags?prefix=grpx-"), byTag, c.sees},
				{"api changes", body("/api/v1/changes?limit=1000"), byID, c.sees},
				{"mcp search_agents", mcpSearch, byID, c.sees},
				{"a2a find-agents", a2a, byID, c.sees},
				{"web catalogue", body("/?q=grpx"), byID, c.web},
				{"ai-catalog", body("/.well-known/ai-catalog.json"), byCardURL, anon},
			} {
				if got := names(f.body, f.by); !slices.Equal(got, sorted(f.want)) {
					t.Errorf("%s lists %v, want %v", f.face, got, sorted(f.want))
				}
			}
			// Counts: the list's and search's totals, and the facet and
			// tag counts of the tag every agent carries.
			var page struct {
				TotalSize int `json:"totalSize"`
				Facets    struct {
					Tags []struct {
						Value string `json:"value"`
						Count int    `json:"count"`
					} `json:"tags"`
				} `json:"facets"`
			}
			for _, path := range []string{"/api/v1/agents?pageSize=1", "/api/v1/agents?q=grpx&pageSize=1"} {
				if err := json.Unmarshal([]byte(body(path)), &page); err != nil {
					t.Fatal(err)
				}
				if page.TotalSize != len(c.sees) {
					t.Errorf("%s: totalSize %d, want %d", path, page.TotalSize, len(c.sees))
				}
				n := -1
				for _, f := range page.Facets.Tags {
					if f.Value == "grpx" {
						n = f.Count
					}
				}
				if n != len(c.sees) {
					t.Errorf("%s: facet grpx counts %d, want %d", path, n, len(c.sees))
				}
			}
			if b := body("/api/v1/tags?prefix=grpx"); !strings.Contains(b, fmt.Sprintf(`"value":"grpx","count":%d`, len(c.sees))) {
				t.Errorf("tags: %s, want grpx counted %d", b, len(c.sees))
			}

			// Reading by id.
			for _, n := range all {
				want := http.StatusNotFound
				if slices.Contains(c.sees, n) {
					want = http.StatusOK
				}
				for _, p := range []string{"", "/card", "/versions", "/versions/1"} {
					if code, b := do(http.MethodGet, "/api/v1/agents/"+id[n]+p, ""); code != want {
						t.Errorf("GET %s%s: %d, want %d: %.200s", n, p, code, want, b)
					}
				}
				if b, isErr := tool("get_agent", map[string]any{"id": id[n]}); isErr == (want == http.StatusOK) {
					t.Errorf("mcp get_agent %s: error %t, want readable %t: %.200s", n, isErr, want == http.StatusOK, b)
				}
				want = http.StatusNotFound
				if slices.Contains(c.web, n) {
					want = http.StatusOK
				}
				if code, _ := do(http.MethodGet, "/agents/"+id[n], ""); code != want {
					t.Errorf("web agent page %s: %d, want %d", n, code, want)
				}
			}
		})
	}
}
