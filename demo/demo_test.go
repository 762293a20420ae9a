package demo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// A demo directory is one the demo made (docs/configuration.md): the demo
// refuses a directory holding a catalogue without the marker and writes
// none into it, marks an empty directory or one of unrelated files once,
// and plain serve's check refuses a marked directory.
func TestDemoDataDirs(t *testing.T) {
	real := t.TempDir()
	st, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: real})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDemoDir(real, time.Now()); !errors.Is(err, ErrNotDemoDir) {
		t.Fatalf("prepareDemoDir on real data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, MarkerFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a marker was written into real data: %v", err)
	}
	if err := CheckNotDemoDir(real); err != nil {
		t.Fatalf("CheckNotDemoDir on real data: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "demo")
	first, err := prepareDemoDir(dir, time.Now())
	if err != nil || !first {
		t.Fatalf("fresh demo dir: first %v, %v", first, err)
	}
	if first, err := prepareDemoDir(dir, time.Now()); err != nil || first {
		t.Fatalf("demo dir again: first %v, %v", first, err)
	}
	if err := CheckNotDemoDir(dir); !errors.Is(err, ErrDemoDir) {
		t.Fatalf("CheckNotDemoDir: %v", err)
	}
	if m, err := ReadMarker(dir); err != nil || m.Cardex != "demo" || m.Ports != (Ports{}) {
		t.Fatalf("marker %+v, %v", m, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if first, err := prepareDemoDir(other, time.Now()); err != nil || !first {
		t.Fatalf("unrelated files: first %v, %v", first, err)
	}
}

// rewriteJSON swaps only the values it is asked to, by path, and keeps
// every other byte: member order, spacing, escapes.
func TestDemoRewriteJSONKeepsBytes(t *testing.T) {
	in := `{ "name" : "A \u0026 B",
  "url":"https://a.example/a2a?x=1\u0026y=2",
  "provider": {"url": "https://a.example/a2a?x=1&y=2"},
  "additionalInterfaces": [ {"url" :"https://a.example/a2a?x=1&y=2", "transport": "JSONRPC"}, "x" ],
  "n": [1, {"url": null}, true] }`
	got, err := rewriteJSON([]byte(in), func(path []string, v string) (string, bool) {
		switch p := strings.Join(path, "/"); {
		case p == "name":
			return "A & B <2>", true
		case (p == "url" || p == "additionalInterfaces/[]/url") && v == "https://a.example/a2a?x=1&y=2":
			return "http://127.0.0.6:1/a2a/x/0", true
		}
		return "", false
	})
	want := `{ "name" : "A & B <2>",
  "url":"http://127.0.0.6:1/a2a/x/0",
  "provider": {"url": "https://a.example/a2a?x=1&y=2"},
  "additionalInterfaces": [ {"url" :"http://127.0.0.6:1/a2a/x/0", "transport": "JSONRPC"}, "x" ],
  "n": [1, {"url": null}, true] }`
	if err != nil || string(got) != want {
		t.Fatalf("%v\n%s", err, got)
	}
	if _, err := rewriteJSON([]byte(`{"a":`), func([]string, string) (string, bool) { return "", false }); err == nil {
		t.Error("a cut document rewrites without an error")
	}
}
