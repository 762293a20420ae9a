package main

import (
	"crypto"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/verifier"
)

func fleetSigner(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
}

var loopback = []string{"--allow-networks", "127.0.0.0/8", "--allow-insecure-http"}

func crawlJSON(t *testing.T, args ...string) (int, map[string]json.RawMessage, crawlReport) {
	t.Helper()
	code, out, errs := runCLI(t, "", append([]string{"crawl", "--json"}, args...)...)
	if errs != "" || strings.Count(out, "\n") != 1 {
		t.Fatalf("stderr %q, stdout %q: want one JSON line", errs, out)
	}
	var keys map[string]json.RawMessage
	var rep crawlReport
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return code, keys, rep
}

func TestCrawlCommandSignedCardJSON(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Signer: fleetSigner})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed})
	code, keys, rep := crawlJSON(t, append(loopback, a.URL())...)
	if code != exitOK {
		t.Fatalf("exit %d: %+v", code, rep)
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"bytes", "card", "cardUrl", "durationMs", "error", "httpStatus", "problems", "url", "valid", "verdict"}
	if !slices.Equal(names, want) {
		t.Errorf("JSON members %v, want %v", names, want)
	}
	if string(keys["error"]) != "null" || rep.URL != a.URL() || rep.CardURL != a.URL() || rep.HTTPStatus != 200 || rep.Bytes <= int64(len(a.Card())) || !rep.Valid {
		t.Errorf("report %+v", rep)
	}
	if rep.Card == nil || rep.Card.Name == "" || rep.Card.Shape == "" || rep.Card.Skills == 0 {
		t.Errorf("card summary %+v", rep.Card)
	}
	if rep.Verdict == nil || rep.Verdict.Status != verifier.StatusVerified || len(rep.Verdict.Signatures) != 1 ||
		rep.Verdict.Signatures[0].Kid != a.KeyID() || rep.Verdict.Signatures[0].KeySource != verifier.SourceJKU {
		t.Errorf("verdict %+v", rep.Verdict)
	}
}

func TestCrawlCommandText(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	code, out, errs := runCLI(t, "", append(append([]string{"crawl"}, a.URL()), loopback...)...)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, line := range []string{"url        " + a.URL() + "\n", "status     200\n", "trust      unsigned\n", "card       \""} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "error ") || strings.Contains(out, "signature ") {
		t.Errorf("unexpected lines:\n%s", out)
	}
}

// docs/configuration.md: exit 1 when the fetch or the card failed, with the error
// class (docs/threats.md C.28 for the HTML page).
func TestCrawlCommandFailures(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	html := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HTMLPage})
	gone := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Status, Status: 404})
	for _, c := range []struct {
		url, class string
		status     int
	}{
		{html.URL(), "not_json", 200},
		{gone.URL(), "http_status", 404},
	} {
		code, keys, rep := crawlJSON(t, append(loopback, c.url)...)
		if code != exitFail || rep.Valid || rep.Error == nil || rep.Error.Class != c.class || rep.HTTPStatus != c.status {
			t.Errorf("%s: exit %d report %+v error %+v", c.url, code, rep, rep.Error)
		}
		if string(keys["card"]) != "null" || string(keys["verdict"]) != "null" {
			t.Errorf("%s: card %s verdict %s, want null", c.url, keys["card"], keys["verdict"])
		}
	}
	code, out, _ := runCLI(t, "", "crawl", html.URL(), "--allow-networks", "127.0.0.0/8", "--allow-insecure-http")
	if code != exitFail || !strings.Contains(out, "error      not_json: ") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}

// The production policy (no allowances) never sends a request to loopback.
func TestCrawlCommandProductionPolicy(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	code, _, rep := crawlJSON(t, a.URL())
	if code != exitFail || rep.Error == nil || rep.Error.Class != "blocked_address" {
		t.Errorf("plain http: exit %d error %+v", code, rep.Error)
	}
	code, _, rep = crawlJSON(t, "--allow-insecure-http", a.URL())
	if code != exitFail || rep.Error == nil || rep.Error.Class != "blocked_address" {
		t.Errorf("http allowed, loopback not: exit %d error %+v", code, rep.Error)
	}
	if n := fleet.Hosts()[0].Requests(); n != 0 {
		t.Errorf("the fleet received %d requests", n)
	}
}

// A bare host means its well-known card, with the legacy fallback.
func TestCrawlCommandBareHostFallback(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	host := fleet.Hosts()[0]
	legacy := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: host, Path: "/.well-known/agent.json"})
	code, _, rep := crawlJSON(t, append(loopback, host.Origin()+"/")...)
	if code != exitOK || rep.URL != legacy.URL() || rep.CardURL != host.Origin()+"/.well-known/agent-card.json" {
		t.Errorf("exit %d url %s cardUrl %s", code, rep.URL, rep.CardURL)
	}
}

// --ca-file trusts a TLS fleet's private CA; without it the handshake fails.
func TestCrawlCommandCAFile(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{TLS: true})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	pem := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(pem, fleet.CA().PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, rep := crawlJSON(t, "--allow-networks", "127.0.0.0/8", a.URL()); code != exitFail || rep.Error == nil || rep.Error.Class != "tls" {
		t.Errorf("without --ca-file: exit %d error %+v", code, rep.Error)
	}
	if code, _, rep := crawlJSON(t, "--allow-networks", "127.0.0.0/8", "--ca-file", pem, a.URL()); code != exitOK {
		t.Errorf("with --ca-file: exit %d error %+v", code, rep.Error)
	}
}

func TestCrawlCommandBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.pem")
	for _, args := range [][]string{
		{"crawl"},
		{"crawl", "https://a.example", "https://b.example"},
		{"crawl", "--timeout", "0s", "https://a.example"},
		{"crawl", "--timeout", "soon", "https://a.example"},
		{"crawl", "--allow-networks", "not-a-cidr", "https://a.example"},
		{"crawl", "--ca-file", missing, "https://a.example"},
		{"crawl", "ftp://a.example/card.json"},
		{"crawl", "https://a.example/card.json#frag"},
		{"crawl", "a.example/card.json"},
		{"crawl", "--frobnicate", "https://a.example"},
	} {
		code, out, errs := runCLI(t, "", args...)
		if code != exitUsage || out != "" || errs == "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
	if code, out, _ := runCLI(t, "", "crawl", "-h"); code != exitOK || out != "" {
		t.Errorf("-h: exit %d", code)
	}
}

// A 304 answered to an unconditional request is a failure (exit 1), not a
// card.
func TestCrawlCommandUnsolicited304(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	t.Cleanup(srv.Close)
	code, _, rep := crawlJSON(t, append(loopback, srv.URL+"/card.json")...)
	if code != exitFail || rep.Error == nil || rep.Error.Class != "http_status" || rep.HTTPStatus != 304 || rep.Card != nil {
		t.Errorf("exit %d report %+v error %+v", code, rep, rep.Error)
	}
}

// A refused fetch says its class once, what was refused, and the flag
// that would allow it; the byte count says what it counts.
func TestNetworkErrorsNameTheFlag(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	host := strings.TrimPrefix(fleet.Hosts()[0].Origin(), "http://")
	addr, _, _ := strings.Cut(host, ":")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"crawl", a.URL()}, "error      blocked_address: " + a.URL() + ": the network policy allows only https URLs (pass --allow-insecure-http to fetch http:// URLs)\n"},
		{[]string{"crawl", "--allow-insecure-http", a.URL()}, "error      blocked_address: " + a.URL() + ": refusing to connect to reserved address " + addr + " (pass --allow-networks " + addr + "/32 to allow it)\n"},
	}
	for _, c := range cases {
		code, out, _ := runCLI(t, "", c.args...)
		if code != exitFail || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d\n%s\nwant the line %q", c.args, code, out, c.want)
		}
		if strings.Count(out, "blocked_address") != 1 {
			t.Errorf("%v repeats the class:\n%s", c.args, out)
		}
		if !strings.Contains(out, "bytes      0 read from the network (headers and bodies of every request, before decompression)\n") {
			t.Errorf("%v: byte count line:\n%s", c.args, out)
		}
	}
	code, _, errs := runCLI(t, "", "lint", "--allow-insecure-http", a.URL())
	want := "cardex lint: fetch " + a.URL() + ": blocked_address: " + a.URL() + ": refusing to connect to reserved address " + addr + " (pass --allow-networks " + addr + "/32 to allow it)\n"
	if code != exitUsage || errs != want {
		t.Errorf("lint: exit %d %q\nwant %q", code, errs, want)
	}
	_, _, rep := crawlJSON(t, a.URL())
	if rep.Error == nil || strings.HasPrefix(rep.Error.Message, "blocked_address") {
		t.Errorf("JSON message repeats the class: %+v", rep.Error)
	}
	if n := fleet.Hosts()[0].Requests(); n != 0 {
		t.Errorf("the fleet received %d requests", n)
	}
}

// crawl --catalog (or a URL on the well-known catalog path) runs the
// registry's catalog crawl and prints each entry's outcome, storing
// nothing; a document that is not a catalog, or a refused address, is
// exit 1.
func TestCrawlCommandCatalog(t *testing.T) {
	var origin string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/ai-catalog.json":
			w.Header().Set("Content-Type", "application/ai-catalog+json")
			w.Write([]byte(`{"specVersion":"1.0","entries":[` +
				`{"identifier":"fx","type":"application/a2a-agent-card+json","url":"` + origin + `/fx.json"},` +
				`{"identifier":"trips","type":"application/a2a-agent-card+json","data":` + string(agentfleet.GenerateCard(2, origin, "1.0.0")) + `},` +
				`{"identifier":"far","type":"application/a2a-agent-card+json","url":"https://far.example.org/card.json"}]}`))
		case "/fx.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write(agentfleet.GenerateCard(1, origin, "1.0.0"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	origin = site.URL
	cat := origin + "/.well-known/ai-catalog.json"
	code, out, errs := runCLI(t, "", append([]string{"crawl", "--catalog", origin}, loopback...)...)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, line := range []string{
		"catalog    " + cat + "\n",
		"document   " + cat + " depth 0, 3 entries\n",
		"entry      " + cat + ` #0 "fx": agent as ` + origin + "/fx.json\n",
		"entry      " + cat + ` #1 "trips": inline as ` + cat + "#trips\n",
		"entry      " + cat + ` #2 "far": off-domain — on example.org`,
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	// The well-known path is a catalog without --catalog; --json is one object.
	code, out, _ = runCLI(t, "", append([]string{"crawl", "--json", cat}, loopback...)...)
	var rep struct {
		CatalogURL string          `json:"catalogUrl"`
		Error      json.RawMessage `json:"error"`
		Crawl      struct {
			Entries []struct{ Outcome string } `json:"entries"`
		} `json:"crawl"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitOK || rep.CatalogURL != cat || string(rep.Error) != "null" || len(rep.Crawl.Entries) != 3 {
		t.Fatalf("json: exit %d %v %s", code, err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append([]string{"crawl", "--catalog", origin + "/fx.json"}, loopback...), "error      not_a_catalog: "},
		{[]string{"crawl", "--catalog", cat}, "error      blocked_address: "},
	} {
		code, out, _ := runCLI(t, "", c.args...)
		if code != exitFail || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d\n%s", c.args, code, out)
		}
	}
}
