package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// Every embedded demo card is a card the parser accepts.
func TestDemoCardsParse(t *testing.T) {
	names, err := fs.Glob(demoCards, "demodata/*.json")
	if err != nil || len(names) < 20 {
		t.Fatalf("%d demo cards, %v", len(names), err)
	}
	for _, n := range names {
		b, err := demoCards.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := agentcard.Parse(b, agentcard.Options{}); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

type demoList struct {
	Agents []struct {
		Status string `json:"status"`
		Trust  string `json:"trust"`
		Health string `json:"health"`
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
	waitFor(t, "the welcome lines", 10*time.Second, func() bool { return strings.Contains(s.stdout.String(), "sign in at") })
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
	waitFor(t, "the demo catalogue", 10*time.Second, func() bool {
		_, _, body := get(t, s.base+"/api/v1/agents?pageSize=100", token)
		list = demoList{}
		json.Unmarshal([]byte(body), &list)
		trust := counts(func(st, tr, _ string) string { return st + "/" + tr })
		health := counts(func(st, _, h string) string { return st + "/" + h })
		return counts(func(st, _, _ string) string { return st })["approved"] >= 25 &&
			trust["approved/verified"] > 0 && trust["approved/unsigned"] > 0 &&
			health["approved/ok"] > 0 && health["approved/failing"] > 0 && health["approved/gone"] > 0
	})
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
	marker, err := os.ReadFile(filepath.Join(data, demoMarker))
	if err != nil || strings.Contains(string(marker), token) || !strings.Contains(string(marker), `"cardex": "demo"`) {
		t.Fatalf("marker %q %v", marker, err)
	}
	if code := s.stop(t); code != exitOK {
		t.Fatalf("exit %d", code)
	}

	// A restart reuses the directory: no new token, no duplicate agents.
	s2 := startInProcess(t, data, "--demo")
	waitFor(t, "the welcome lines", 10*time.Second, func() bool { return strings.Contains(s2.stdout.String(), "first start") })
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
	waitFor(t, "the demo catalogue after a restart", 10*time.Second, func() bool {
		_, _, body := get(t, s2.base+"/api/v1/agents?pageSize=100", token)
		list = demoList{}
		json.Unmarshal([]byte(body), &list)
		return list.TotalSize == total && counts(func(st, _, _ string) string { return st })["approved"] == total
	})
}

// The demo never mixes with real data (CONTRACT.md §6): --demo refuses a
// data directory holding a catalogue without the marker, and plain serve
// refuses a demo directory.
func TestDemoDataDirSeparation(t *testing.T) {
	real := t.TempDir()
	adminToken(t, real) // creates and migrates cardex.db
	code, _, stderr := runCLI(t, "", "serve", "--demo", "--data", real, "--addr", "127.0.0.1:0")
	if code != exitFail || !strings.Contains(stderr, "not a demo's") {
		t.Fatalf("--demo on real data: %d %q", code, stderr)
	}
	if _, err := prepareDemoDir(real, time.Now()); !errors.Is(err, errNotDemoDir) {
		t.Fatalf("prepareDemoDir on real data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, demoMarker)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a marker was written into real data: %v", err)
	}

	demo := filepath.Join(t.TempDir(), "demo")
	first, err := prepareDemoDir(demo, time.Now())
	if err != nil || !first {
		t.Fatalf("fresh demo dir: first %v, %v", first, err)
	}
	if first, err := prepareDemoDir(demo, time.Now()); err != nil || first {
		t.Fatalf("demo dir again: first %v, %v", first, err)
	}
	if err := checkNotDemoDir(demo); !errors.Is(err, errDemoDir) {
		t.Fatalf("checkNotDemoDir: %v", err)
	}
	code, _, stderr = runCLI(t, "", "serve", "--data", demo, "--addr", "127.0.0.1:0")
	if code != exitFail || !strings.Contains(stderr, "holds the demo catalogue") {
		t.Fatalf("serve on a demo dir: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(demo, "cardex.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("plain serve touched the demo dir: %v", err)
	}
	// An empty directory and a directory of unrelated files are fine.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if first, err := prepareDemoDir(other, time.Now()); err != nil || !first {
		t.Fatalf("unrelated files: first %v, %v", first, err)
	}
}
