package main

import (
	"crypto"
	"database/sql"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/verifier"
)

// get fetches url with an optional bearer token and returns status,
// content type and body.
func get(t *testing.T, u, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
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
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// post sends a JSON body with a bearer token and decodes the answer.
func post(t *testing.T, u, token, body string, out any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatalf("POST %s: %d, undecodable answer: %v", u, res.StatusCode, err)
		}
	}
	return res.StatusCode
}

// adminToken creates an admin token in data, beside or before a server
// (docs/api.md: token create may run while a server uses the file).
// adminToken makes an admin token on the store in data, creating the store
// first as an operator would (`cardex migrate`): token create refuses a
// data directory without one.
func adminToken(t *testing.T, data string) string {
	t.Helper()
	if code, _, stderr := runCLI(t, "", "migrate", "--data", data); code != exitOK {
		t.Fatalf("migrate: %d %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "token", "create", "--role", "admin", "--data", data)
	if code != exitOK {
		t.Fatalf("token create: %d %s", code, stderr)
	}
	return strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0])
}

// The one mux: the UI at /, the API under /api/, probes, problems pages
// and Prometheus metrics.
func TestServeRoutesOneMux(t *testing.T) {
	s := startInProcess(t, filepath.Join(t.TempDir(), "data"), "--log-format", "json")
	polltest.Until(t, "/readyz once the index is built", 20*time.Second, func() bool {
		code, _, _ := get(t, s.base+"/readyz", "")
		return code == http.StatusOK
	})
	cases := []struct {
		path, ctype, contains string
		status                int
	}{
		{"/", "text/html", `<link rel="ai-catalog" type="application/ai-catalog+json" href="/.well-known/ai-catalog.json">`, 200},
		{"/.well-known/ai-catalog.json", "application/ai-catalog+json", `"entries": []`, 200},
		{"/.well-known/agent-card.json", "application/json", `"name": "Cardex"`, 200},
		{"/mcp", "", "", 405},
		{"/api/v1/agents", "application/json", `"agents":[]`, 200},
		{"/healthz", "application/json", `"ok"`, 200},
		{"/readyz", "application/json", `"ready"`, 200},
		{"/problems/not-found", "", "", 200},
		{"/api/v1/agents/nope", "application/problem+json", "/problems/not-found", 404},
		{"/no/such/page", "text/html", "", 404},
		{"/api-reference", "text/html", `id="listAudit"`, 200},
		{"/legend", "text/html", `id="signature-verified"`, 200},
	}
	for _, tc := range cases {
		code, ctype, body := get(t, s.base+tc.path, "")
		if code != tc.status || !strings.HasPrefix(ctype, tc.ctype) || !strings.Contains(body, tc.contains) {
			t.Errorf("GET %s: %d %q, want %d %q containing %q; body %.200s", tc.path, code, ctype, tc.status, tc.ctype, tc.contains, body)
		}
	}
	code, ctype, body := get(t, s.base+"/metrics", "")
	if code != 200 || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("/metrics: %d %q", code, ctype)
	}
	for _, family := range []string{"cardex_http_requests_total", "cardex_http_request_duration_seconds", "cardex_crawl_in_flight",
		"cardex_index_lag_changes", "cardex_index_size_bytes", "cardex_index_segments", "cardex_index_deleted_documents", "cardex_index_compaction_due", "cardex_crawl_lease_conflicts_total", "cardex_crawl_due_backlog",
		"cardex_probe_rate_per_second", "cardex_probe_agents", "cardex_probe_due_backlog", "cardex_probe_never_probed",
		"cardex_interactive_in_flight", "cardex_writes_in_flight", "cardex_background_wait_seconds_total", "cardex_background_busy_seconds_total",
		"cardex_sql_open_connections", "cardex_sql_wait_count_total", "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(body, "# TYPE "+family+" ") {
			t.Errorf("/metrics lacks %s", family)
		}
	}
	// The requests above are counted under their route templates, the
	// UI's too (its route table's patterns; "web:unmatched" for a path none
	// matches).
	for _, series := range []string{`cardex_http_requests_total{route="/api/v1/agents",status="200"} 1`,
		`cardex_crawl_due_backlog 0`, `cardex_sql_open_connections{pool="write"} 1`,
		`cardex_probe_rate_per_second 20`, `cardex_probe_agents 0`, `cardex_probe_due_backlog 0`, // the floor: no agents
		`cardex_probe_never_probed 0`,
		`cardex_http_requests_total{route="/{$}",status="200"} 1`, `cardex_http_requests_total{route="/legend",status="200"} 1`,
		`cardex_http_requests_total{route="/api-reference",status="200"} 1`,
		`cardex_http_requests_total{route="web:unmatched",status="404"} 1`} {
		if !strings.Contains(body, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	// UI requests are logged, without their query string.
	get(t, s.base+"/?q=secret-words", "")
	polltest.Until(t, "the UI access log", 5*time.Second, func() bool { return strings.Contains(s.logs.String(), `"route":"/{$}","path":"/"`) })
	if strings.Contains(s.logs.String(), "secret-words") {
		t.Fatal("the access log holds a query string")
	}
}

// End to end: an agent served by a loopback fleet is submitted through the
// API, crawled by the scheduler, approved, indexed, and found by a word of
// its skill in the API and on the catalogue page.
func TestServeSubmitCrawlApproveSearch(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	agent := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Card: []byte(`{
  "name": "Tidewater Harbour Pilot",
  "description": "Schedules harbour pilotage for arriving vessels.",
  "version": "1.2.0",
  "supportedInterfaces": [{"url": "` + "http://127.0.0.1/a2a" + `", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {},
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "berth", "name": "Berth booking", "description": "Books a berth and a pilot for a vessel's arrival.", "tags": ["maritime"]}]
}`)})
	data := filepath.Join(t.TempDir(), "data")
	token := adminToken(t, data)
	s := startInProcess(t, data, "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--crawl-tick", "1s")

	id := submitAndApprove(t, s.base, token, agent.URL())
	polltest.Until(t, "the agent in search results", 20*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents?q=pilotage", "")
		var page struct {
			Agents []struct{ ID string } `json:"agents"`
		}
		json.Unmarshal([]byte(body), &page)
		return len(page.Agents) == 1 && page.Agents[0].ID == id
	})
	code, _, page := get(t, s.base+"/?q="+url.QueryEscape("berth"), "")
	if code != 200 || !strings.Contains(page, html.EscapeString("Tidewater Harbour Pilot")) {
		t.Fatalf("catalogue page: %d, agent missing", code)
	}
	if agent.Requests() < 1 {
		t.Fatal("the fleet agent was never fetched")
	}
	// The crawl went through the metrics decorator.
	_, _, metrics := get(t, s.base+"/metrics", "")
	for _, series := range []string{`cardex_crawl_attempts_total{result="ok"} `, `cardex_verify_results_total{profile="",status="unsigned"} `,
		`cardex_crawl_fetch_duration_seconds_count{result="ok"} `} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// agentRecord is the part of the API's agent record these tests read.
type agentRecord struct {
	ID         string `json:"id"`
	VersionSeq int64  `json:"versionSeq"`
	Status     string `json:"status"`
	Trust      string `json:"trust"`
	Health     string `json:"health"`
}

// submitAndApprove submits cardURL anonymously, waits (bounded) for its
// first crawl and approves that version with the admin token.
func submitAndApprove(t *testing.T, base, token, cardURL string) string {
	t.Helper()
	var rec agentRecord
	if code := post(t, base+"/api/v1/agents", "", fmt.Sprintf(`{"cardUrl":%q}`, cardURL), &rec); code != http.StatusAccepted {
		t.Fatalf("submit: %d", code)
	}
	polltest.Until(t, "the first crawl", 20*time.Second, func() bool {
		_, _, body := get(t, base+"/api/v1/agents/"+rec.ID, token)
		json.Unmarshal([]byte(body), &rec)
		return rec.VersionSeq > 0
	})
	if code := post(t, base+"/api/v1/agents/"+rec.ID+"/approve", token, fmt.Sprintf(`{"versionSeq":%d}`, rec.VersionSeq), &rec); code != 200 || rec.Status != "approved" {
		t.Fatalf("approve: %d %+v", code, rec)
	}
	return rec.ID
}

// --ca-file reaches both the card fetch and the key-set fetch (the
// verifier fetches through the crawler's fetcher): a signed agent on a
// TLS fleet whose CA only the file names verifies, on SQLite and on
// PostgreSQL (where the index still lives in --data).
func TestServeTLSFleetWithCAFile(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			fleet := agentfleet.Start(t, agentfleet.Options{TLS: true, Signer: signCard})
			agent := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed})
			ca := filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(ca, fleet.CA().PEM(), 0o600); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "data")
			args := []string{"--allow-networks", "127.0.0.0/8", "--ca-file", ca, "--crawl-tick", "1s"}
			storeArgs := []string{"--data", data}
			if store == "postgres" {
				dsn := registrytest.PostgresURL(t)
				args = append(args, "--database-url", dsn)
				storeArgs = append(storeArgs, "--database-url", dsn)
			}
			if code, _, stderr := runCLI(t, "", append([]string{"migrate"}, storeArgs...)...); code != exitOK {
				t.Fatalf("migrate: %d %s", code, stderr)
			}
			code, stdout, stderr := runCLI(t, "", append([]string{"token", "create", "--role", "admin"}, storeArgs...)...)
			if code != exitOK {
				t.Fatalf("token create: %d %s", code, stderr)
			}
			token := strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0])
			s := startInProcess(t, data, args...)
			id := submitAndApprove(t, s.base, token, agent.URL())
			var rec agentRecord
			_, _, body := get(t, s.base+"/api/v1/agents/"+id, "")
			if err := json.Unmarshal([]byte(body), &rec); err != nil || rec.Trust != "verified" || rec.Health != "ok" {
				t.Fatalf("agent %+v %v", rec, err)
			}
			if fleet.Hosts()[0].JWKSRequests() < 1 {
				t.Fatal("the key set was never fetched")
			}
		})
	}
}

// Without --ca-file the same TLS fleet is refused: the fleet's CA is not
// a system root, so the crawl records the error class tls.
func TestServeTLSFleetWithoutCAFile(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{TLS: true})
	agent := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	s := startInProcess(t, filepath.Join(t.TempDir(), "data"), "--allow-networks", "127.0.0.0/8", "--crawl-tick", "1s")
	var rec struct {
		ID        string `json:"id"`
		LastError *struct {
			Class string `json:"class"`
		} `json:"lastError"`
	}
	if code := post(t, s.base+"/api/v1/agents", "", fmt.Sprintf(`{"cardUrl":%q}`, agent.URL()), &rec); code != http.StatusAccepted {
		t.Fatalf("submit: %d", code)
	}
	polltest.Until(t, "the failed crawl", 20*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents/"+rec.ID, "")
		json.Unmarshal([]byte(body), &rec)
		return rec.LastError != nil
	})
	if rec.LastError.Class != "tls" {
		t.Fatalf("error class %q, want tls", rec.LastError.Class)
	}
}

// Graceful shutdown finishes the crawl in flight, skips the claimed agent
// still queued behind it, and releases every lease: no agent is left
// leased in SQL after SIGTERM (main cancels serve's context on it).
func TestServeShutdownReleasesLeases(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2})
	hangs := []*agentfleet.AgentHandle{
		fleet.Add(agentfleet.Agent{Behavior: agentfleet.HangAfterHeaders, Host: fleet.Hosts()[0]}),
		fleet.Add(agentfleet.Agent{Behavior: agentfleet.HangAfterHeaders, Host: fleet.Hosts()[1]}),
	}
	data := filepath.Join(t.TempDir(), "data")
	// One worker: one agent runs, the other waits in the queue, leased.
	s := startInProcess(t, data, "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--crawl-tick", "1s",
		"--crawl-workers", "1", "--crawl-timeout", "2s", "--lease-ttl", "30s")
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "cardex.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	leased := func() int {
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM agents WHERE lease_owner <> '' OR lease_until IS NOT NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, h := range hangs {
		if code := post(t, s.base+"/api/v1/agents", "", fmt.Sprintf(`{"cardUrl":%q}`, h.URL()), nil); code != http.StatusAccepted {
			t.Fatalf("submit: %d", code)
		}
	}
	polltest.Until(t, "one crawl in flight and both agents leased", 20*time.Second, func() bool {
		return hangs[0].InFlight()+hangs[1].InFlight() == 1 && leased() == 2
	})
	if code := s.stop(t); code != exitOK {
		t.Fatalf("exit %d\n%s", code, s.logs.String())
	}
	if n := leased(); n != 0 {
		t.Fatalf("after shutdown: %d agents leased\n%s", n, s.logs.String())
	}
	var attempts int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM fetch_attempts`).Scan(&attempts); err != nil || attempts != 1 {
		t.Fatalf("want the crawl in flight recorded and the queued one skipped: %d attempts, %v", attempts, err)
	}
	if hangs[0].Requests()+hangs[1].Requests() != 1 {
		t.Fatalf("the queued agent was fetched: %d + %d requests", hangs[0].Requests(), hangs[1].Requests())
	}
}

// signCard signs the fleet's cards with the verifier, as a publisher would.
func signCard(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
}
