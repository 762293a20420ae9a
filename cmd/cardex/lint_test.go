package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const lintCards = "../../agentcard/testdata/cards/"

func writeCard(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "card.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runLint runs a lint command with its own fetcher, as main's table would.
func runLint(t *testing.T, l *lintCommand, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	return l.run(t.Context(), e, args), out.String(), errb.String()
}

func TestLintValidCardWithWarnings(t *testing.T) {
	code, out, errs := runCLI(t, "", "lint", lintCards+"wild_Laisky_laisky-blog_public_.well-known_agent-card.json")
	want := "warning provider-name-alias /provider/name: provider.name is not a card field; read as provider.organization\n" +
		"valid v0.2 card: 0 errors, 1 warning\n"
	if code != exitOK || out != want || errs != "" {
		t.Fatalf("code=%d stdout=%q stderr=%q", code, out, errs)
	}
}

func TestLintCleanCard(t *testing.T) {
	code, out, _ := runCLI(t, "", "lint", lintCards+"A2A_main_docs_specification.md_8.5-sample-agent-card.json")
	if code != exitOK || out != "valid v1 card: 0 errors, 0 warnings\n" {
		t.Fatalf("code=%d stdout=%q", code, out)
	}
}

func TestLintErrors(t *testing.T) {
	path := writeCard(t, `{"name":"Good","NAME":"Evil","skills":"x"}`)
	code, out, errs := runCLI(t, "", "lint", path)
	if code != exitFail || errs != "" {
		t.Fatalf("code=%d stderr=%q", code, errs)
	}
	for _, line := range []string{
		`error case-variant-key /NAME: key "NAME" differs only in case from the field "name"`,
		// A wrong type is a warning: the member is ignored (docs/lint.md).
		"warning wrong-type /skills: skills must be an array, not string; ignored",
		"error no-endpoint /supportedInterfaces: the card lists no A2A endpoint: clients cannot reach the agent",
		"invalid card: 2 errors, 7 warnings",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	// Not JSON and not a card are lint errors too (exit 1), not unreadable input.
	code, out, _ = runCLI(t, "", "lint", lintCards+"A2A_v0.2.0_docs_specification.md_5.6-sample-agent-card_INVALID-trailing-comma.json")
	if code != exitFail || !strings.HasPrefix(out, "error invalid-json /securitySchemes/google: ") || !strings.Contains(out, "at byte 855") {
		t.Fatalf("code=%d out=%q", code, out)
	}
	// A name without an endpoint, or an endpoint without a name, is no
	// agent card either: an error, exit 1.
	for body, want := range map[string]string{
		`{"name":"Manifest","skills":[{"id":"s"}]}`:   "error no-endpoint /supportedInterfaces: ",
		`{"url":"https://a.example/a2a","skills":[]}`: "error no-name /name: ",
		`{"name":"MCP only","supportedInterfaces":[{"url":"https://a.example/mcp","protocolBinding":"JSONRPC","protocolVersion":"2025-06-18"}]}`: "error no-endpoint /supportedInterfaces: ",
	} {
		code, out, _ = runCLI(t, "", "lint", writeCard(t, body))
		if code != exitFail || !strings.Contains(out, want) || !strings.Contains(out, "\ninvalid card: 1 error, ") {
			t.Errorf("%s: code=%d out=%q", body, code, out)
		}
	}
	code, out, _ = runCLI(t, "", "lint", "--json", lintCards+"A2A_pr258_samples_python-smart_crypto_portfolio_manager_agents_orchestration_agent.json")
	if code != exitFail || !strings.HasPrefix(out, `{"valid":false,"problems":[{"pointer":"","severity":"error","code":"not-a-card","message":`) {
		t.Fatalf("code=%d out=%q", code, out)
	}
}

func TestLintJSONShape(t *testing.T) {
	path := lintCards + "a2a-go_a2acompat_a2av0_agentcard_test.go_oldCardJSON-v0.3.json"
	for _, args := range [][]string{{"lint", "--json", path}, {"lint", path, "--json"}, {"lint", "-json", path}} {
		code, out, errs := runCLI(t, "", args...)
		if code != exitOK || errs != "" {
			t.Fatalf("%q: code=%d stderr=%q", args, code, errs)
		}
		var rep map[string]any
		dec := json.NewDecoder(strings.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
		if len(rep) != 2 || rep["valid"] != true {
			t.Fatalf("report = %v", rep)
		}
		problems := rep["problems"].([]any)
		want := map[string]any{"pointer": "/skills/0/security/0/example", "severity": "warning", "code": "undefined-security-scheme",
			"message": `security scheme "example" is not defined in securitySchemes`}
		if len(problems) != 1 || fmt.Sprint(problems[0]) != fmt.Sprint(want) {
			t.Fatalf("problems = %v", problems)
		}
	}
	// A clean card prints an empty list, not null.
	_, out, _ := runCLI(t, "", "lint", "--json", lintCards+"A2A_main_docs_specification.md_8.5-sample-agent-card.json")
	if out != "{\"valid\":true,\"problems\":[]}\n" {
		t.Fatalf("out = %q", out)
	}
}

func TestLintStdin(t *testing.T) {
	code, out, _ := runCLI(t, `{"name":"a","url":"https://a.example/a2a","skills":[],"iconUrl":"javascript:alert(1)"}`, "lint", "-")
	if code != exitOK || !strings.Contains(out, `warning dangerous-url-scheme /iconUrl: the "javascript" scheme is never rendered as a link`+"\n") {
		t.Fatalf("code=%d out=%q", code, out)
	}
	code, out, _ = runCLI(t, "", "lint", "-")
	if code != exitFail || !strings.HasPrefix(out, "error empty-document /: ") {
		t.Fatalf("empty stdin: code=%d out=%q", code, out)
	}
	// Over the 512 KiB card limit: reported, not cut short.
	code, out, _ = runCLI(t, `{"name":"`+strings.Repeat("x", 600<<10)+`"}`, "lint", "-")
	if code != exitFail || !strings.HasPrefix(out, "error too-large /: ") {
		t.Fatalf("large stdin: code=%d out=%.200q", code, out)
	}
}

func TestLintUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"lint"},
		{"lint", "--bogus", "card.json"},
		{"lint", "--json=maybe", "card.json"},
		{"lint", "a.json", "b.json"},
	} {
		code, out, errs := runCLI(t, "", args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, lintUsage) {
			t.Errorf("%q: code=%d stdout=%q stderr=%q", args, code, out, errs)
		}
	}
	code, out, errs := runCLI(t, "", "lint", "-h")
	if code != exitOK || out != "" || !strings.Contains(errs, "Usage: cardex lint") {
		t.Errorf("-h: code=%d stderr=%q", code, errs)
	}
}

func TestLintUnreadableFile(t *testing.T) {
	code, out, errs := runCLI(t, "", "lint", filepath.Join(t.TempDir(), "missing.json"))
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, "cardex lint: open ") || !strings.Contains(errs, "no such file") {
		t.Fatalf("code=%d stdout=%q stderr=%q", code, out, errs)
	}
	code, _, errs = runCLI(t, "", "lint", t.TempDir())
	if code != exitUsage || !strings.Contains(errs, "cardex lint: read ") {
		t.Fatalf("directory: code=%d stderr=%q", code, errs)
	}
}

// Without an injected fetcher a URL goes through the crawler's hardened
// fetcher: the production policy never contacts a loopback server (B.11),
// and the allowances of docs/security.md "Network policy" open it.
func TestLintURLUsesTheCrawlerPolicy(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":"a","description":"d","version":"1","url":"https://a.example/a2a","skills":[]}`)
	}))
	defer srv.Close()
	code, out, errs := runCLI(t, "", "lint", srv.URL+"/.well-known/agent-card.json")
	if code != exitUsage || out != "" || hits.Load() != 0 || !strings.Contains(errs, "blocked_address") {
		t.Fatalf("production policy: code=%d hits=%d stdout=%q stderr=%q", code, hits.Load(), out, errs)
	}
	code, out, errs = runCLI(t, "", "lint", "--allow-insecure-http", "--allow-networks", "127.0.0.0/8", "--json", srv.URL+"/.well-known/agent-card.json")
	if code != exitOK || hits.Load() != 1 || !strings.HasPrefix(out, `{"valid":true`) {
		t.Fatalf("allowed: code=%d hits=%d stdout=%q stderr=%q", code, hits.Load(), out, errs)
	}
}

func TestLintURLWithFetcher(t *testing.T) {
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"a","skills":[],"supportedInterfaces":[
			{"url":"%s/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
			{"url":"https://elsewhere.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, srv.URL)
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()
	l := newLintCommand(nil)
	allow := []string{"--allow-insecure-http", "--allow-networks", "127.0.0.0/8"}
	code, out, errs := runLint(t, l, "", append(allow, "--json", srv.URL+"/.well-known/agent-card.json")...)
	if code != exitOK || errs != "" {
		t.Fatalf("code=%d stderr=%q", code, errs)
	}
	// The fetched URL is the card URL: the second interface is off its host.
	if !strings.Contains(out, `{"pointer":"/supportedInterfaces/1/url","severity":"warning","code":"off-host-interface"`) ||
		strings.Contains(out, `"pointer":"/supportedInterfaces/0/url","severity":"warning","code":"off-host-interface"`) {
		t.Fatalf("out = %s", out)
	}
	code, _, errs = runLint(t, l, "", append(allow, srv.URL+"/missing")...)
	if code != exitUsage || !strings.Contains(errs, "http_status") || !strings.Contains(errs, "404") {
		t.Fatalf("fetch failure: code=%d stderr=%q", code, errs)
	}
	failing := newLintCommand(func(context.Context, string) ([]byte, error) { return nil, errors.New("blocked_address") })
	if code, _, errs := runLint(t, failing, "", "https://10.0.0.1/"); code != exitUsage || !strings.Contains(errs, "blocked_address") {
		t.Fatalf("code=%d stderr=%q", code, errs)
	}
}
