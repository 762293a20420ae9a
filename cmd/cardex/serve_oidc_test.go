package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
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

// The --oidc-* settings: each has its CARDEX_ twin, the secret file may
// end in a newline, an http issuer is for loopback only, and nothing of
// it is accepted without an issuer.
func TestServeConfigOIDC(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envMap(map[string]string{
		"CARDEX_OIDC_ISSUER":             "https://login.example.com/realms/cardex",
		"CARDEX_OIDC_CLIENT_ID":          "cardex-web",
		"CARDEX_OIDC_CLIENT_SECRET_FILE": secret,
		"CARDEX_OIDC_ADMIN_GROUPS":       "/cardex-admins, /ops",
		"CARDEX_OIDC_PUBLISHER_HOSTS":    "payments=pay.example.com,api.example.com;search=search.example.com",
		"CARDEX_OIDC_AUDIENCE":           "cardex-api",
	})
	c, err := parseServeConfig([]string{"--base-url", "https://cardex.example.com", "--oidc-subject-claim", "oid"}, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	o := c.oidc
	if o == nil || o.Issuer != "https://login.example.com/realms/cardex" || o.ClientID != "cardex-web" || o.ClientSecret != "s3cret" ||
		!slices.Equal(o.AdminGroups, []string{"/cardex-admins", "/ops"}) || !slices.Equal(o.PublisherHosts["payments"], []string{"pay.example.com", "api.example.com"}) ||
		!slices.Equal(o.Scopes, []string{"openid", "profile", "email"}) || o.GroupsClaim != "groups" || o.SubjectClaim != "oid" ||
		o.Audience != "cardex-api" || o.Name != "login.example.com" {
		t.Fatalf("oidc config %+v", o)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--oidc-client-id", "x"}, "--oidc-client-id (CARDEX_OIDC_CLIENT_ID): needs --oidc-issuer"},
		{[]string{"--oidc-issuer", "http://login.example.com", "--oidc-client-id", "x", "--base-url", "https://c.example.com"}, "http is allowed only on a loopback host"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x"}, "a base URL is required"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--base-url", "https://c.example.com"}, "a client id is required"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--base-url", "https://c.example.com", "--oidc-audience", "x"}, "the audience must differ from the client id"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--base-url", "https://c.example.com", "--oidc-publisher-hosts", "payments"}, "want GROUP=host1,host2"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--base-url", "https://c.example.com", "--oidc-scopes", "profile email"}, "scopes must include openid"},
	} {
		_, err := parseServeConfig(c.args, envMap(nil), &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestServeOIDCBearer runs the whole server with a real OpenID Provider
// (identity/identitytest): the provider's JWT access tokens work on the
// API, MCP and A2A as the role and groups the person's groups give; each
// refused JWT answers 401 naming its reason class; a person's curation
// action is recorded with the provider's subject and email, and the
// audit log finds it by either. Both databases.
func TestServeOIDCBearer(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) { serveOIDCBearer(t, store) })
	}
}

func serveOIDCBearer(t *testing.T, store string) {
	site := newVisSite(t, "127.0.0.1")
	data, storeArgs, cardexToken := migratedStore(t, store)
	admin := cardexToken("--role", "admin")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	op := identitytest.Start(t, base+"/auth/oidc/callback", base+"/",
		identitytest.User{ID: "u-ada", Username: "ada", Email: "ada@example.com", Groups: []string{"/cardex-admins"}},
		identitytest.User{ID: "u-pat", Username: "pat", Email: "pat@example.com", Groups: []string{"payments"}})
	other := identitytest.Start(t, base+"/auth/oidc/callback", base+"/",
		identitytest.User{ID: "u-pat", Username: "pat", Email: "pat@example.com", Groups: []string{"payments"}})
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte(identitytest.ClientSecret+"\n"), 0o600)
	s := startInProcess(t, data, slices.Concat([]string{"--addr", addr, "--base-url", base, "--allow-networks", "127.0.0.0/8",
		"--allow-insecure-http", "--crawl-tick", "1s", "--read-rate", "0",
		"--oidc-issuer", op.Issuer, "--oidc-client-id", identitytest.ClientID, "--oidc-client-secret-file", secret,
		"--oidc-admin-groups", "/cardex-admins", "--oidc-audience", "cardex-api"}, storeArgs)...)

	token := func(p *identitytest.Provider, subject, aud string) string {
		id, sec := p.AddService(subject, aud)
		return p.AccessToken(t, id, sec)
	}
	adaJWT, patJWT := token(op, "u-ada", "cardex-api"), token(op, "u-pat", "cardex-api")

	// An internal agent, pending until ada approves it with her JWT.
	site.serve("/zephyr.json", visCard("zinnia"))
	var rec struct {
		ID         string `json:"id"`
		VersionSeq int64  `json:"versionSeq"`
	}
	if code := post(t, s.base+"/api/v1/agents", admin, fmt.Sprintf(`{"cardUrl":%q,"visibility":"internal"}`, site.url+"/zephyr.json"), &rec); code != http.StatusAccepted {
		t.Fatalf("submit: %d", code)
	}
	polltest.Until(t, "the first crawl", 20*time.Second, func() bool {
		_, _, b := get(t, s.base+"/api/v1/agents/"+rec.ID, admin)
		json.Unmarshal([]byte(b), &rec)
		return rec.VersionSeq > 0
	})
	if code := post(t, s.base+"/api/v1/agents/"+rec.ID+"/approve", patJWT, `{"versionSeq":1}`, nil); code != http.StatusForbidden {
		t.Errorf("a reader's JWT approving: %d, want 403", code)
	}
	if code := post(t, s.base+"/api/v1/agents/"+rec.ID+"/approve", adaJWT, `{"versionSeq":1,"reason":"checked"}`, nil); code != http.StatusOK {
		t.Fatalf("an admin group member's JWT approving: %d", code)
	}
	// The index has applied the approval once a reader's listing counts
	// the agent's tag (an admin's would count it while pending).
	polltest.Until(t, "the approval in the index", 20*time.Second, func() bool {
		_, _, b := get(t, s.base+"/api/v1/tags?prefix=zephyr-zinnia", patJWT)
		return strings.Contains(b, `"zephyr-zinnia"`)
	})

	// The reader's JWT reads the internal agent on every face; no token
	// does not.
	for _, c := range []struct {
		name, token string
		sees        bool
	}{{"pat's JWT", patJWT, true}, {"anonymous", "", false}} {
		code, b := call(t, http.MethodGet, s.base+"/api/v1/agents?q=zephyr", c.token, "")
		if code != http.StatusOK || strings.Contains(b, rec.ID) != c.sees {
			t.Errorf("%s: API search %d, lists the agent %t: %.600s", c.name, code, strings.Contains(b, rec.ID), b)
		}
		mc := mcp.NewClient(&mcp.Implementation{Name: "oidc-test", Version: "1"}, nil)
		cs, err := mc.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp",
			HTTPClient: &http.Client{Transport: bearer(c.token)}}, nil)
		if err != nil {
			t.Fatalf("%s: mcp: %v", c.name, err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_agents", Arguments: map[string]any{"q": "zephyr"}})
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		mb, _ := json.Marshal(res.StructuredContent)
		if strings.Contains(string(mb), rec.ID) != c.sees {
			t.Errorf("%s: MCP search_agents lists the agent %t", c.name, !c.sees)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"zephyr"}]}}}`
		code, b = call(t, http.MethodPost, s.base+"/a2a/jsonrpc", c.token, body, "A2A-Version", "1.0")
		if code != http.StatusOK || strings.Contains(b, rec.ID) != c.sees {
			t.Errorf("%s: A2A find-agents %d, lists the agent %t", c.name, code, strings.Contains(b, rec.ID))
		}
	}

	// Every refused JWT: 401, the reason class as the problem type, and
	// nothing more.
	forge := func(alg string) string {
		h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"` + alg + `","typ":"JWT"}`))
		c := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + op.Issuer + `","sub":"u-ada","aud":"cardex-api","exp":9999999999,"groups":["/cardex-admins"]}`))
		return h + "." + c + ".c2ln"
	}
	parts := strings.Split(patJWT, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+op.Issuer+`","sub":"u-ada","aud":"cardex-api","exp":9999999999,"groups":["/cardex-admins"]}`)) + "." + parts[2]
	// (MCP and A2A answer one case each: the failed-credential guard
	// counts every face's failures from this address together.)
	for i, c := range []struct{ name, token, slug string }{
		{"alg none", forge("none"), "token-alg-not-allowed"},
		{"HMAC", forge("HS256"), "token-alg-not-allowed"},
		{"another issuer", token(other, "u-pat", "cardex-api"), "token-wrong-issuer"},
		{"another audience", token(op, "u-pat", "someone-else"), "token-wrong-audience"},
		{"claims under another token's signature", tampered, "token-bad-signature"},
	} {
		code, b := call(t, http.MethodGet, s.base+"/api/v1/agents", c.token, "")
		var p struct {
			Type, Title, Detail string
			Status              int
		}
		json.Unmarshal([]byte(b), &p)
		want := "the bearer JWT was refused: " + strings.TrimPrefix(c.slug, "token-")
		if code != http.StatusUnauthorized || p.Type != "/problems/"+c.slug || p.Status != 401 || p.Detail != want {
			t.Errorf("%s: %d %s, want 401 %s", c.name, code, b, c.slug)
		}
		switch i {
		case 0:
			code, b = call(t, http.MethodPost, s.base+"/mcp", c.token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if code != http.StatusUnauthorized || strings.TrimSpace(b) != want {
				t.Errorf("%s: MCP %d %q", c.name, code, b)
			}
		case 2:
			code, b = call(t, http.MethodPost, s.base+"/a2a/jsonrpc", c.token, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`, "A2A-Version", "1.0")
			if code != http.StatusUnauthorized || !strings.Contains(b, `"UNAUTHENTICATED"`) || !strings.Contains(b, want) {
				t.Errorf("%s: A2A %d %s", c.name, code, b)
			}
		}
	}
	// A Cardex token still works beside them.
	if code, _ := call(t, http.MethodGet, s.base+"/api/v1/audit", admin, ""); code != http.StatusOK {
		t.Errorf("Cardex admin token: %d", code)
	}

	// The audit log names the person: by subject and by email.
	for _, actor := range []string{"u-ada", "ada@example.com"} {
		code, b := call(t, http.MethodGet, s.base+"/api/v1/audit?action=approve&actor="+actor, admin, "")
		var page struct {
			Entries []struct {
				ActorID, ActorName, ActorSubject, ActorDisplayName, AgentID, Reason string
			}
		}
		json.Unmarshal([]byte(b), &page)
		if code != http.StatusOK || len(page.Entries) != 1 {
			t.Fatalf("audit actor=%s: %d %s", actor, code, b)
		}
		e := page.Entries[0]
		if e.ActorID != "" || e.ActorName != "ada@example.com" || e.ActorSubject != "u-ada" || e.ActorDisplayName != "ada@example.com" ||
			e.AgentID != rec.ID || e.Reason != "checked" {
			t.Errorf("audit entry %+v", e)
		}
	}
	if code, b := call(t, http.MethodGet, s.base+"/api/v1/audit/export?format=csv&actor=u-ada", admin, ""); code != http.StatusOK ||
		!strings.HasSuffix(strings.TrimSpace(b), ",u-ada,ada@example.com") || strings.Count(b, "\n") != 2 {
		t.Errorf("audit export: %d %s", code, b)
	}
}
