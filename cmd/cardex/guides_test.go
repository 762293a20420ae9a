package main

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
)

// guideBlock is one ```sh block of a guide.
type guideBlock struct {
	line    int
	when    string // "" (server running), "skip" or "stopped"
	command string
}

// guideBlocks reads the ```sh blocks of a guide. An HTML comment
// "<!-- guide: skip …" or "<!-- guide: stopped …" on the line before a
// block marks it: skipped (a setup the test does itself, or a step that
// needs what only a real deployment has), or run once the server stopped.
func guideBlocks(t *testing.T, path string) []guideBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []guideBlock
	var cur *guideBlock
	prev := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && line == "```sh":
			cur = &guideBlock{line: n}
			if when, ok := strings.CutPrefix(prev, "<!-- guide: "); ok {
				cur.when, _, _ = strings.Cut(when, " ")
			}
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.command += line + "\n"
		}
		prev = line
	}
	if err := sc.Err(); err != nil || cur != nil {
		t.Fatalf("%s: %v, unterminated block %v", path, err, cur)
	}
	return out
}

// runGuide runs blocks with bash -euo pipefail in dir, one shell so the
// variables a block sets carry to the next.
func runGuide(t *testing.T, name, dir string, env []string, blocks []guideBlock) {
	t.Helper()
	var script strings.Builder
	for _, b := range blocks {
		script.WriteString("echo '### " + name + " line " + strconv.Itoa(b.line) + "'\n" + b.command)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// TestGuidesRunAsWritten runs the commands of docs/publisher-guide.md and
// docs/operator-guide.md, as written, against a real server and a loopback
// "host" serving the publisher's files. The publisher guide's first block
// (its variables) is the one not run: the test sets CARDEX and ORIGIN to
// its loopback servers, and FETCH_FLAGS and the server's flags to what the
// guide's text says a local test host needs.
func TestGuidesRunAsWritten(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "sqlite3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed to run the guides' commands", tool)
			}
			t.Skipf("%s is not installed: skipping the guides' commands", tool)
		}
	}
	guide, err := os.ReadFile("../../docs/publisher-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	fetchFlags := regexp.MustCompile("`FETCH_FLAGS=\"([^\"`]+)\"`").FindSubmatch(guide)
	serveFlags := regexp.MustCompile("`cardex serve ([^`]+)`").FindSubmatch(guide)
	if fetchFlags == nil || serveFlags == nil {
		t.Fatal("the publisher guide does not say which flags a local test host needs")
	}
	bin := procBin(t)
	work, tools := t.TempDir(), t.TempDir()
	if err := os.Symlink(bin, filepath.Join(tools, "cardex")); err != nil {
		t.Fatal(err)
	}
	host := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(work, "public"))))
	defer host.Close()
	data := filepath.Join(work, "data")
	s := startInProcess(t, data, strings.Fields(string(serveFlags[1]))...)
	polltest.Until(t, "/readyz", 20*time.Second, func() bool { code, _, _ := get(t, s.base+"/readyz", ""); return code == 200 })
	env := []string{"PATH=" + tools + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CARDEX=" + s.base, "ORIGIN=" + host.URL, "FETCH_FLAGS=" + string(fetchFlags[1]), "DATA=" + data}

	pub := guideBlocks(t, "../../docs/publisher-guide.md")
	var run []guideBlock
	for _, b := range pub {
		if b.when == "" {
			run = append(run, b)
		}
	}
	if len(run) < 5 {
		t.Fatalf("the publisher guide has %d runnable blocks", len(run))
	}
	runGuide(t, "publisher-guide.md", work, env, run)
	// What the guide promised: the card was fetched, and the agent waits
	// for review.
	id, err := os.ReadFile(filepath.Join(work, "agent.json"))
	if err != nil || !strings.Contains(string(id), `"health":"ok"`) || !strings.Contains(string(id), `"status":"pending"`) {
		t.Fatalf("after the publisher guide: %s %v", id, err)
	}

	var running, stopped []guideBlock
	for _, b := range guideBlocks(t, "../../docs/operator-guide.md") {
		switch b.when {
		case "":
			running = append(running, b)
		case "stopped":
			stopped = append(stopped, b)
		}
	}
	if len(running) < 5 || len(stopped) < 2 {
		t.Fatalf("the operator guide has %d + %d runnable blocks", len(running), len(stopped))
	}
	runGuide(t, "operator-guide.md", work, env, running)
	if code := s.stop(t); code != exitOK {
		t.Fatalf("server exit %d", code)
	}
	runGuide(t, "operator-guide.md (server stopped)", work, env, stopped)
}
