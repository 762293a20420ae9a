package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/internal/polltest"
)

// An A2A client pointed at the server's base URL finds its card and gets
// an answer over JSON-RPC.
func TestServeA2AClient(t *testing.T) {
	s := startInProcess(t, filepath.Join(t.TempDir(), "data"))
	ctx := t.Context()
	hc := &http.Client{Timeout: 10 * time.Second}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, s.base)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "Cardex" || len(card.SupportedInterfaces) != 3 || card.SupportedInterfaces[0].URL != s.base+"/a2a/jsonrpc" {
		t.Fatalf("card %+v", card)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	var res a2a.SendMessageResult
	// The index may still be opening right after start.
	polltest.Until(t, "an answer", 20*time.Second, func() bool {
		res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("pilots"))})
		return err == nil
	})
	msg, ok := res.(*a2a.Message)
	if !ok || len(msg.Parts) != 2 || msg.Parts[0].Text() != `No agents found for "pilots".` {
		t.Fatalf("answer %#v", res)
	}
	_, _, metrics := get(t, s.base+"/metrics", "")
	if !strings.Contains(metrics, `route="a2a"`) {
		t.Error("/metrics has no a2a route series")
	}
}

// --card-key signs the card; `cardex verify` verifies it with the key set
// the server publishes.
func TestServeSignedCard(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "card.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "serve", "--card-key", keyFile, "--data", filepath.Join(dir, "x")); code != exitUsage ||
		!strings.Contains(stderr, "--base-url") {
		t.Fatalf("--card-key without --base-url: %d %s", code, stderr)
	}
	s := startInProcess(t, filepath.Join(dir, "data"), "--card-key", keyFile, "--base-url", "https://cardex.example.com")
	code, _, card := get(t, s.base+"/.well-known/agent-card.json", "")
	if code != 200 || !strings.Contains(card, `"signatures"`) || !strings.Contains(card, `"jku":`) && !strings.Contains(card, `"protected"`) {
		t.Fatalf("card: %d %s", code, card)
	}
	code, _, jwks := get(t, s.base+"/.well-known/jwks.json", "")
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if code != 200 || json.Unmarshal([]byte(jwks), &set) != nil || len(set.Keys) != 1 || set.Keys[0]["d"] != nil {
		t.Fatalf("jwks: %d %s", code, jwks)
	}
	cardFile, jwksFile := filepath.Join(dir, "cardex-card.json"), filepath.Join(dir, "jwks.json")
	os.WriteFile(cardFile, []byte(card), 0o600)
	os.WriteFile(jwksFile, []byte(jwks), 0o600)
	code, stdout, stderr := runCLI(t, "", "verify", "--jwks", jwksFile, cardFile)
	if code != exitOK {
		t.Fatalf("cardex verify: %d %s %s", code, stdout, stderr)
	}
	// Two signatures, one key: the SDK verifiers' form (v1.0 members only)
	// and the spec's (every member); each verifies.
	if !strings.Contains(stdout, "signature 0: verified") || !strings.Contains(stdout, "signature 1: verified") ||
		!strings.Contains(stdout, "profile:    spec-v1-only") || !strings.Contains(stdout, "profile:    spec\n") {
		t.Fatalf("cardex verify: %s", stdout)
	}
}

// An MCP client (the Go SDK's, in both protocol eras) finds agents at /mcp.
func TestServeMCPClient(t *testing.T) {
	s := startInProcess(t, filepath.Join(t.TempDir(), "data"))
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp"},
			&mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatalf("%s: %v", era, err)
		}
		var res *mcp.CallToolResult
		polltest.Until(t, "an answer", 20*time.Second, func() bool {
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_agents", Arguments: map[string]any{"q": "pilots"}})
			return err == nil && !res.IsError
		})
		b, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(b), `"agents":[]`) || !strings.Contains(string(b), `"totalSize":0`) {
			t.Fatalf("%s: %s", era, b)
		}
		cs.Close()
	}
}

// Submitting a bare host crawls its AI Catalog: the agents it lists on the
// same host, by URL or inline, become pending agents that name the
// catalog; an entry on another domain does not. The inline agent, pending
// and then internal, appears to no anonymous client on any surface (API,
// AI Catalog, MCP, A2A) until it is approved and public. A catalog URL
// submitted directly is crawled at once.
func TestServeCatalogCrawl(t *testing.T) {
	card := func(name string) string {
		return `{"name":"` + name + `","description":"d","version":"1.0.0","supportedInterfaces":[{"url":"http://127.0.0.1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
	}
	var base string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/ai-catalog.json":
			w.Header().Set("Content-Type", "application/ai-catalog+json")
			fmt.Fprintf(w, `{"specVersion":"1.0","entries":[
 {"identifier":"urn:air:x:agent:fx","type":"application/a2a-agent-card+json","url":"%[1]s/fx.json"},
 {"identifier":"urn:air:x:agent:trips","mediaType":"application/a2a-agent-card+json","url":"%[1]s/trips.json"},
 {"identifier":"urn:air:x:agent:far","type":"application/a2a-agent-card+json","url":"https://far.example.org/card.json"},
 {"identifier":"urn:air:x:agent:zanzibar","type":"application/a2a-agent-card+json","data":%[2]s}]}`, base, card("Zanzibar Ferries"))
		case "/team.json":
			w.Header().Set("Content-Type", "application/ai-catalog+json")
			fmt.Fprintf(w, `{"specVersion":"1.0","entries":[{"identifier":"urn:air:x:agent:team","type":"application/a2a-agent-card+json","url":"%s/team/a.json"}]}`, base)
		case "/team/a.json":
			fmt.Fprint(w, card("Team"))
		case "/fx.json":
			fmt.Fprint(w, card("FX"))
		case "/trips.json":
			fmt.Fprint(w, card("Trips"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	base = site.URL
	data := filepath.Join(t.TempDir(), "data")
	token := adminToken(t, data)
	s := startInProcess(t, data, "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--crawl-tick", "1s", "--read-rate", "0")
	if code := post(t, s.base+"/api/v1/agents", "", fmt.Sprintf(`{"cardUrl":%q}`, site.URL+"/"), nil); code != http.StatusAccepted {
		t.Fatalf("submit: %d", code)
	}
	var page struct {
		Agents []struct {
			ID      string `json:"id"`
			CardURL string `json:"cardUrl"`
			Catalog string `json:"catalog"`
			Status  string `json:"status"`
		} `json:"agents"`
	}
	polltest.Until(t, "the catalog's agents", 20*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents?status=pending&pageSize=100", token)
		json.Unmarshal([]byte(body), &page)
		return len(page.Agents) == 4
	})
	found := map[string]string{}
	for _, a := range page.Agents {
		found[a.CardURL] = a.Catalog
		if a.Catalog != "" {
			// The agent page says which catalog brought it.
			if code, _, html := get(t, s.base+"/agents/"+a.ID, ""); code != 200 || !strings.Contains(html, `id="catalog"`) ||
				!strings.Contains(html, a.Catalog) {
				t.Errorf("agent page %d lacks the catalog", code)
			}
		}
	}
	cat := site.URL + "/.well-known/ai-catalog.json"
	if found[site.URL+"/fx.json"] != cat || found[site.URL+"/trips.json"] != cat || found[site.URL+"/.well-known/agent-card.json"] != "" ||
		found[cat+"#urn:air:x:agent:zanzibar"] != cat {
		t.Fatalf("agents %+v", found)
	}
	var inline string
	for _, a := range page.Agents {
		if a.CardURL == cat+"#urn:air:x:agent:zanzibar" {
			inline = a.ID
		}
	}
	var rec struct {
		VersionSeq    int64  `json:"versionSeq"`
		CatalogInline bool   `json:"catalogInline"`
		Health        string `json:"health"`
	}
	polltest.Until(t, "the inline agent's card", 20*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents/"+inline, token)
		json.Unmarshal([]byte(body), &rec)
		return rec.VersionSeq == 1
	})
	if !rec.CatalogInline || rec.Health != "ok" {
		t.Fatalf("inline agent %+v", rec)
	}

	// Anonymous clients see the inline agent on no surface while it is
	// pending, nor once approved as internal; approved and public, they do.
	mcpSearch := func() string {
		c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_agents", Arguments: map[string]any{"q": "Zanzibar"}})
		if err != nil || res.IsError {
			t.Fatalf("mcp: %v %+v", err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}
	a2aSearch := func() string {
		hc := &http.Client{Timeout: 10 * time.Second}
		ac, err := agentcard.NewResolver(hc).Resolve(t.Context(), s.base)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a2aclient.NewFromCard(t.Context(), ac, a2aclient.WithJSONRPCTransport(hc))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Destroy()
		res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Zanzibar"))})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	surfaces := func() map[string]string {
		_, _, list := get(t, s.base+"/api/v1/agents?q=Zanzibar", "")
		_, _, catalog := get(t, s.base+"/.well-known/ai-catalog.json", "")
		_, _, html := get(t, s.base+"/?q=Zanzibar", "")
		return map[string]string{"api": list, "ai-catalog": catalog, "web": html, "mcp": mcpSearch(), "a2a": a2aSearch()}
	}
	hidden := func(when string) {
		for name, body := range surfaces() {
			if strings.Contains(body, inline) || strings.Contains(body, "Zanzibar Ferries") {
				t.Errorf("%s: the inline agent shows on %s: %.300s", when, name, body)
			}
		}
	}
	hidden("pending")
	if code := post(t, s.base+"/api/v1/agents/"+inline+"/approve", token, `{"versionSeq":1}`, nil); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	visibility := func(v string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPatch, s.base+"/api/v1/agents/"+inline, strings.NewReader(`{"visibility":"`+v+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("visibility %s: %d", v, res.StatusCode)
		}
	}
	visibility("internal")
	hidden("internal")
	visibility("public")
	polltest.Until(t, "the public inline agent on every surface", 20*time.Second, func() bool {
		for _, body := range surfaces() {
			if !strings.Contains(body, inline) {
				return false
			}
		}
		return true
	})
	// Cardex's own catalog points at its copy of an inline card: the
	// inline entry has no card URL of its own.
	_, _, own := get(t, s.base+"/.well-known/ai-catalog.json", "")
	if !strings.Contains(own, `"url": "`+s.base+"/api/v1/agents/"+inline+`/card"`) {
		t.Errorf("own catalog entry of the inline agent: %.2000s", own)
	}

	// A catalog URL submitted directly is registered and crawled at once.
	var sub struct {
		Catalog string `json:"catalog"`
		Agents  []struct {
			CardURL string `json:"cardUrl"`
		} `json:"agents"`
	}
	if code := post(t, s.base+"/api/v1/agents", "", fmt.Sprintf(`{"catalogUrl":%q}`, site.URL+"/team.json"), &sub); code != http.StatusAccepted ||
		sub.Catalog != site.URL+"/team.json" || len(sub.Agents) != 1 || sub.Agents[0].CardURL != site.URL+"/team/a.json" {
		t.Fatalf("catalog submission: %d %+v", code, sub)
	}
}
