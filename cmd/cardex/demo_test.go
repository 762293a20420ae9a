package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/demo"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry"
)

type demoList struct {
	Agents []struct {
		ID          string `json:"id"`
		CardURL     string `json:"cardUrl"`
		Status      string `json:"status"`
		Trust       string `json:"trust"`
		Health      string `json:"health"`
		NeedsReview bool   `json:"needsReview"`
		VersionSeq  int    `json:"versionSeq"`
		Catalog     string `json:"catalog"`
		Liveness    struct {
			State string `json:"state"`
		} `json:"liveness"`
	} `json:"agents"`
	TotalSize int `json:"totalSize"`
}

var demoTokenLine = regexp.MustCompile(`Demo admin token \(shown once; sign in at http://127\.0\.0\.1:\d+/admin\): (\S+)\n`)

// `serve --demo` shows a realistic catalogue within 10 s: at least 25
// approved agents, verified and unsigned ones, healthy and failing/gone
// ones, under the demo banner; a restart reuses the catalogue.
func TestServeDemo(t *testing.T) {
	data := filepath.Join(t.TempDir(), "demo")
	s := startInProcess(t, data, "--demo")
	polltest.Until(t, "the welcome lines", 10*time.Second, func() bool { return strings.Contains(s.stdout.String(), "sign in at") })
	if !strings.Contains(s.stdout.String(), "Cardex demo: browse "+s.base+"/\n") {
		t.Fatalf("no browse line: %q", s.stdout.String())
	}
	m := demoTokenLine.FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no admin token line: %q", s.stdout.String())
	}
	token := m[1]
	var list demoList
	counts := func(f func(status, trust, health string) string) map[string]int {
		c := map[string]int{}
		for _, a := range list.Agents {
			c[f(a.Status, a.Trust, a.Health)]++
		}
		return c
	}
	polltest.Until(t, "the demo catalogue", 10*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents?pageSize=100", token)
		list = demoList{}
		json.Unmarshal([]byte(body), &list)
		trust := counts(func(st, tr, _ string) string { return st + "/" + tr })
		health := counts(func(st, _, h string) string { return st + "/" + h })
		flagged, changed := 0, 0
		for _, a := range list.Agents {
			if a.Status == "approved" && a.NeedsReview {
				flagged++
			}
			if strings.Contains(a.CardURL, demo.ChangingPath) && a.VersionSeq >= 2 {
				changed++
			}
		}
		return counts(func(st, _, _ string) string { return st })["approved"] >= 25 &&
			trust["approved/verified"] > 0 && trust["approved/unsigned"] > 0 &&
			health["approved/ok"] > 0 && health["approved/failing"] >= 2 && health["approved/gone"] > 0 &&
			flagged == 1 && changed == 1
	})
	// The README's example searches find something in the demo.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile(`curl -s '(localhost:8080)(/api/v1/(?:agents|skills|tags)\?[^']+)'`).FindAllStringSubmatch(string(readme), -1)
	if len(examples) < 3 {
		t.Fatalf("README has %d example searches", len(examples))
	}
	for _, ex := range examples {
		// The index follows SQL a moment behind: allow it to catch up.
		body, found := "", false
		for deadline := time.Now().Add(10 * time.Second); !found && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			_, _, body = get(t, s.base+ex[2], "")
			var res struct {
				TotalSize *int              `json:"totalSize"`
				Skills    []json.RawMessage `json:"skills"`
				Tags      []json.RawMessage `json:"tags"`
			}
			json.Unmarshal([]byte(body), &res)
			found = (res.TotalSize != nil && *res.TotalSize > 0) || len(res.Skills) > 0 || len(res.Tags) > 0
		}
		if !found {
			t.Errorf("the README's %s finds nothing in the demo: %.300s", ex[2], body)
		}
	}
	// Liveness: the demo's agents answer, one is degraded and one
	// unreachable (TestDemoAgentsAnswerA2A counts them).
	polltest.Until(t, "the demo's liveness states", 30*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents?pageSize=100", token)
		list = demoList{}
		json.Unmarshal([]byte(body), &list)
		live := map[string]int{}
		for _, a := range list.Agents {
			live[a.Liveness.State]++
		}
		return live["answering"] > 0 && live["degraded"] > 0 && live["unreachable"] > 0
	})
	// One agent waits in the review queue.
	if c := counts(func(st, _, _ string) string { return st }); c["pending"] != 1 || c["approved"] != len(list.Agents)-1 {
		t.Fatalf("statuses %v, want one pending", c)
	}
	// The changing agent's history has a diff with an added skill.
	for _, a := range list.Agents {
		if !strings.Contains(a.CardURL, demo.ChangingPath) {
			continue
		}
		_, _, body := get(t, s.base+"/api/v1/agents/"+a.ID+"/versions", token)
		if !strings.Contains(body, `"kind":"skill-added"`) || !strings.Contains(body, `"kind":"version-changed"`) {
			t.Errorf("the changing agent's versions hold no skill-added and version diff: %.400s", body)
		}
	}
	// The multi-agent host lists its agents in an AI Catalog
	// (demo_catalog.go): they were registered from it and approved.
	fromCatalog := 0
	for _, a := range list.Agents {
		if a.Catalog != "" && a.Status == "approved" && strings.HasSuffix(a.Catalog, "/.well-known/ai-catalog.json") {
			fromCatalog++
		}
	}
	if fromCatalog != demo.CatalogListed { // and the inline one
		t.Errorf("%d approved agents from the demo's catalog, want %d", fromCatalog, demo.CatalogListed)
	}
	total := list.TotalSize
	if total != len(list.Agents) || total < 30 {
		t.Fatalf("%d agents, totalSize %d", len(list.Agents), total)
	}
	// One host claimed itself (docs/claims.md): a publisher token from a
	// verified claim submitted its agent.
	_, _, audit := get(t, s.base+"/api/v1/audit?limit=1000", token)
	var log struct {
		Entries []registry.AuditEntry `json:"entries"`
	}
	json.Unmarshal([]byte(audit), &log)
	claimed, selfSubmit := "", false
	for _, e := range log.Entries {
		if e.Action == "token-create" && e.ActorName == "host-claim" {
			claimed, _ = e.Detail["tokenId"].(string)
		}
		if e.Action == "submit" && claimed != "" && e.ActorID == claimed && strings.HasSuffix(e.Detail["cardUrl"].(string), "/self/.well-known/agent-card.json") {
			selfSubmit = true
		}
	}
	if !selfSubmit {
		t.Errorf("no agent submitted by a claim's publisher token in the audit log:\n%.3000s", audit)
	}
	code, _, page := get(t, s.base+"/", "")
	if code != 200 || !strings.Contains(page, "Demo catalogue: the agents here are examples") {
		t.Fatalf("catalogue page %d without the demo banner", code)
	}
	// The marker holds nothing secret.
	marker, err := os.ReadFile(filepath.Join(data, demo.MarkerFile))
	if err != nil || strings.Contains(string(marker), token) || !strings.Contains(string(marker), `"cardex": "demo"`) {
		t.Fatalf("marker %q %v", marker, err)
	}
	if code := s.stop(t); code != exitOK {
		t.Fatalf("exit %d", code)
	}

	// A restart reuses the directory: no new token, no duplicate agents.
	s2 := startInProcess(t, data, "--demo")
	polltest.Until(t, "the welcome lines", 10*time.Second, func() bool { return strings.Contains(s2.stdout.String(), "first start") })
	if demoTokenLine.MatchString(s2.stdout.String()) || !strings.Contains(s2.stdout.String(), "printed on the first start") {
		t.Fatalf("restart output %q", s2.stdout.String())
	}
	// The command it prints names this demo's directory and works as
	// printed: its token signs in to this demo.
	m = regexp.MustCompile(`'cardex (token create --role admin --data (\S+))' makes another`).FindStringSubmatch(s2.stdout.String())
	if m == nil || m[2] != data {
		t.Fatalf("restart output names no data directory: %q", s2.stdout.String())
	}
	code, tokOut, errs := runCLI(t, "", strings.Fields(m[1])...)
	if code != exitOK {
		t.Fatalf("the printed command: exit %d %q", code, errs)
	}
	if code, _, _ := get(t, s2.base+"/api/v1/audit?limit=1", strings.TrimSpace(tokOut)); code != 200 {
		t.Fatalf("the new token answers %d on the demo", code)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last listing: totalSize %d (first run %d), by status %v", list.TotalSize, total,
				counts(func(st, _, _ string) string { return st }))
		}
	})
	polltest.Until(t, "the demo catalogue after a restart", 10*time.Second, func() bool {
		_, _, body := get(t, s2.base+"/api/v1/agents?pageSize=100", token)
		list = demoList{}
		json.Unmarshal([]byte(body), &list)
		return list.TotalSize == total && counts(func(st, _, _ string) string { return st })["approved"] == total-1
	})
	// An admin removes a demo agent; the next start seeds the rest and
	// does not bring it back.
	removed := ""
	for _, a := range list.Agents {
		if a.Status == "approved" && !a.NeedsReview && !strings.Contains(a.CardURL, "/live/") {
			removed = a.ID
		}
	}
	req, _ := http.NewRequest("DELETE", s2.base+"/api/v1/agents/"+removed, strings.NewReader(`{"reason":"not in my demo"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("removing a demo agent: %v %v", res, err)
	}
	res.Body.Close()
	if code := s2.stop(t); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	s3 := startInProcess(t, data, "--demo")
	polltest.Until(t, func() string { return "the restart to skip the removed agent; logs:\n" + s3.logs.String() }, 10*time.Second,
		func() bool { return strings.Contains(s3.logs.String(), "demo agent removed by an admin") })
	polltest.Until(t, "the demo catalogue after a removal", 15*time.Second, func() bool {
		_, _, body := get(t, s3.base+"/api/v1/agents?pageSize=100&status=approved&status=pending", token)
		list = demoList{}
		json.Unmarshal([]byte(body), &list)
		flagged := 0
		for _, a := range list.Agents {
			if a.NeedsReview {
				flagged++
			}
		}
		return list.TotalSize == total-1 && flagged == 1
	})
	if _, _, body := get(t, s3.base+"/api/v1/agents/"+removed, token); !strings.Contains(body, `"status":"removed"`) {
		t.Errorf("the removed agent came back: %.200s", body)
	}
	if strings.Contains(s3.logs.String(), "demo catalogue incomplete") || strings.Contains(s3.logs.String(), "agent-removed") {
		t.Errorf("seeding stopped after the removal:\n%s", s3.logs.String())
	}
}

// The demo never mixes with real data (docs/configuration.md): --demo refuses a
// data directory holding a catalogue without the marker, and plain serve
// refuses a demo directory.
func TestDemoDataDirSeparation(t *testing.T) {
	real := t.TempDir()
	if code, _, errs := runCLI(t, "", "migrate", "--data", real); code != exitOK { // creates cardex.db
		t.Fatalf("migrate: %d %s", code, errs)
	}
	adminToken(t, real)
	code, _, stderr := runCLI(t, "", "serve", "--demo", "--data", real, "--addr", "127.0.0.1:0")
	if code != exitFail || !strings.Contains(stderr, "not a demo's") {
		t.Fatalf("--demo on real data: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(real, demo.MarkerFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a marker was written into real data: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "demo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, demo.MarkerFile), []byte(`{"cardex":"demo"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "", "serve", "--data", dir, "--addr", "127.0.0.1:0")
	if code != exitFail || !strings.Contains(stderr, "holds the demo catalogue") {
		t.Fatalf("serve on a demo dir: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "cardex.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("plain serve touched the demo dir: %v", err)
	}
}

// startDemoHere starts `serve --demo` in the current directory without
// --data or --addr, as a person would.
func startDemoHere(t *testing.T) *testServer {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(t.Context())
	s := &testServer{logs: &lockedBuffer{}, stdout: &lockedBuffer{}, cancel: cancel, exited: make(chan int, 1)}
	e := &env{stdin: strings.NewReader(""), stdout: s.stdout, stderr: s.logs, getenv: func(string) string { return "" }}
	go func() { s.exited <- run(ctx, e, []string{"serve", "--demo", "--addr-file", addrFile}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	s.base = "http://" + readAddrFile(t, addrFile, s.exited)
	return s
}

// A second demo on the same machine, started the same way in the same
// directory, gets its own data directory, address and agent ports, and a
// restart keeps its agents' URLs.
func TestSecondDemoOnTheSameMachine(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	// The default address is taken (by the first demo, or anything else).
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	saved := defaultAddr
	defaultAddr = busy.Addr().String()
	t.Cleanup(func() { defaultAddr = saved })

	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := startDemoHere(t)
	// The README's token command, run where the demo was started, makes a
	// token the demo accepts.
	tokenCmd := regexp.MustCompile(`TOKEN=\$\(cardex (token create [^)]+)\)`).FindStringSubmatch(string(readme))
	if tokenCmd == nil {
		t.Fatal("README has no token command")
	}
	code, tok, errs := runCLI(t, "", strings.Fields(tokenCmd[1])...)
	if code != exitOK {
		t.Fatalf("README's %q: exit %d %q", tokenCmd[1], code, errs)
	}
	if code, _, _ := get(t, first.base+"/api/v1/audit?limit=1", strings.TrimSpace(tok)); code != 200 {
		t.Errorf("README's token answers %d on the demo", code)
	}
	second := startDemoHere(t)
	if first.base == second.base || first.base == "http://"+busy.Addr().String() {
		t.Fatalf("addresses %s and %s (default %s)", first.base, second.base, busy.Addr())
	}
	m1, err1 := demo.ReadMarker("cardex-demo")
	m2, err2 := demo.ReadMarker("cardex-demo-2")
	if err1 != nil || err2 != nil {
		t.Fatalf("markers: %v %v", err1, err2)
	}
	if m1.Ports.Fleet == 0 || m1.Ports == m2.Ports || m1.Ports.Fleet == m2.Ports.Fleet || m1.Ports.Live == m2.Ports.Live {
		t.Fatalf("the demos share agent ports: %+v %+v", m1.Ports, m2.Ports)
	}
	if !strings.Contains(second.logs.String(), "directory in use by another running demo") {
		t.Errorf("the second demo does not say why it moved:\n%.2000s", second.logs.String())
	}
	// Every agent a demo registered, whatever its state: read with the
	// admin token the demo printed on its first start.
	secondToken := ""
	urls := func(s *testServer) []string {
		tok := secondToken
		if m := demoTokenLine.FindStringSubmatch(s.stdout.String()); m != nil {
			tok = m[1]
		}
		var out []string
		// Every agent is registered once the catalogue is approved.
		polltest.Until(t, "a seeded demo", 30*time.Second, func() bool { return strings.Contains(s.logs.String(), "demo catalogue approved") })
		polltest.Until(t, "the demo's agents", 20*time.Second, func() bool {
			_, _, body := get(t, s.base+"/api/v1/agents?pageSize=100", tok)
			var l demoList
			json.Unmarshal([]byte(body), &l)
			out = out[:0]
			for _, a := range l.Agents {
				out = append(out, a.CardURL)
			}
			return len(out) >= 25
		})
		slices.Sort(out)
		return out
	}
	u1, u2 := urls(first), urls(second)
	secondToken = demoTokenLine.FindStringSubmatch(second.stdout.String())[1]
	for _, u := range u2 {
		if slices.Contains(u1, u) {
			t.Fatalf("both demos list %s", u)
		}
	}
	if code := second.stop(t); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	again := startDemoHere(t)
	// A restart keeps every agent at the same card URL (ports kept in
	// demo.json). Agents a catalog crawl registers later in the first run
	// may already be there, but only on the hosts the demo served before.
	got := urls(again)
	if missing := diffStrings(u2, got); len(missing) > 0 {
		t.Errorf("the restarted demo lost %v", missing)
	}
	hosts := map[string]bool{}
	for _, u := range u2 {
		if p, err := url.Parse(u); err == nil {
			hosts[p.Host] = true
		}
	}
	for _, u := range diffStrings(got, u2) {
		if p, err := url.Parse(u); err != nil || !hosts[p.Host] {
			t.Errorf("the restarted demo lists %s, on a host it did not serve before", u)
		}
	}
	if m, _ := demo.ReadMarker("cardex-demo-2"); m.Ports != m2.Ports {
		t.Errorf("ports after a restart %+v, want %+v", m.Ports, m2.Ports)
	}
}

// diffStrings lists what a has that b has not.
func diffStrings(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
