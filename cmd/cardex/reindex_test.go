package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
)

// seedRegistry fills store with n agents with fetched cards: every third
// approved, the last removed. It returns the ids of the approved and removed.
func seedRegistry(t *testing.T, store *registry.Store, n int) (approved []string, removed string) {
	t.Helper()
	ctx := t.Context()
	svc := registry.NewService(store, registry.ServiceConfig{})
	admin := registry.Principal{Role: registry.RoleAdmin, Name: "test"}
	var ids []string
	for i := range n {
		a, err := svc.Submit(ctx, registry.Anonymous, fmt.Sprintf("https://agent%02d.example.com/", i), registry.VisibilityPublic)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	due, err := svc.ClaimDue(ctx, "seed", time.Now().Add(time.Minute), time.Minute, n, n)
	if err != nil || len(due) != n {
		t.Fatalf("claimed %d of %d: %v", len(due), n, err)
	}
	for _, d := range due {
		raw := []byte(`{"name":"Agent ` + d.Host + `","description":"Plans weather routes.","version":"1.0.0",` +
			`"supportedInterfaces":[{"url":"https://` + d.Host + `/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
			`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
			`"skills":[{"id":"s","name":"Forecast","description":"Weather.","tags":["weather"]}]}`)
		parsed, err := agentcard.Parse(raw, agentcard.Options{CardURL: d.CardURL})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RecordFetch(ctx, "seed", d.ID, registry.FetchResult{
			Attempt:    registry.FetchAttempt{At: time.Now(), URL: d.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
			FetchedURL: d.CardURL, Raw: raw, Card: parsed.Card, Problems: parsed.Problems, Trust: registry.TrustUnsigned,
		}); err != nil {
			t.Fatal(err)
		}
	}
	one := int64(1)
	for i, id := range ids {
		if i%3 == 0 && i < n-1 {
			if _, err := svc.Act(ctx, admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: &one}); err != nil {
				t.Fatal(err)
			}
			approved = append(approved, id)
		}
	}
	removed = ids[n-1]
	if _, err := svc.Act(ctx, admin, removed, registry.ActionRemove, registry.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	return approved, removed
}

// countIndexed opens the index in dir and counts what a viewer finds.
func countIndexed(t *testing.T, dir string, v registry.Scope) int {
	t.Helper()
	idx, err := search.Open(filepath.Join(dir, "index"), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	res, err := idx.Search(t.Context(), search.Query{Scope: v, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res.TotalSize
}

var (
	reindexSummary  = regexp.MustCompile(`^reindexed 31 agents \(30 searchable; removed agents are not indexed\) in [0-9.]+(µs|ms|s)\n$`)
	reindexProgress = regexp.MustCompile(`(^|\n)reindex: 31/31 agents read \([0-9]+/s\)\n$`)
)

// docs/configuration.md: `cardex reindex` on a stopped deployment builds the index
// from SQL, with progress on stderr and a summary on stdout.
func TestReindexStoppedDeployment(t *testing.T) {
	dir := t.TempDir()
	approved, _ := seedRegistry(t, registrytest.SQLiteAt(t, dir), 31)
	code, out, errs := runCLI(t, "", "reindex", "--data", dir)
	if code != exitOK || !reindexSummary.MatchString(out) || !reindexProgress.MatchString(errs) {
		t.Fatalf("reindex: %d %q %q", code, out, errs)
	}
	if n := countIndexed(t, dir, registry.ScopeOf(registry.Anonymous)); n != len(approved) {
		t.Fatalf("anonymous finds %d, want %d", n, len(approved))
	}
	if n := countIndexed(t, dir, registry.ScopeOf(registry.Principal{Role: registry.RoleAdmin})); n != 30 {
		t.Fatalf("admin finds %d, want 30 (the removed agent is not indexed)", n)
	}
	// Again on an existing index: a new generation, same counts.
	if code, out, _ := runCLI(t, "", "reindex", "--data", dir); code != exitOK || !strings.HasPrefix(out, "reindexed 31 agents") {
		t.Fatalf("second reindex: %d %q", code, out)
	}
	if n := countIndexed(t, dir, registry.ScopeOf(registry.Principal{Role: registry.RoleAdmin})); n != 30 {
		t.Fatalf("after the second reindex admin finds %d", n)
	}
}

func TestReindexPostgres(t *testing.T) {
	url := registrytest.PostgresURL(t)
	store, err := registry.Open(t.Context(), registry.OpenOptions{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	approved, _ := seedRegistry(t, store, 7)
	store.Close()
	dir := t.TempDir() // with PostgreSQL, --data is where this host keeps its index
	code, out, errs := runCLIEnv(t, map[string]string{"CARDEX_DATABASE_URL": url}, "reindex", "--data", dir)
	if code != exitOK || !strings.HasPrefix(out, "reindexed 7 agents (6 searchable") {
		t.Fatalf("reindex: %d %q %q", code, out, errs)
	}
	if n := countIndexed(t, dir, registry.ScopeOf(registry.Anonymous)); n != len(approved) {
		t.Fatalf("anonymous finds %d, want %d", n, len(approved))
	}
}

// The helper process of TestReindexRefusesWhileIndexHeld: it holds the
// index in CARDEX_TEST_HOLD_INDEX until its stdin closes, like a server.
func TestReindexHelperHoldsIndex(t *testing.T) {
	dir := os.Getenv("CARDEX_TEST_HOLD_INDEX")
	if dir == "" {
		t.Skip("helper process only")
	}
	idx, err := search.Open(dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
}

// docs/threats.md G.70, docs/configuration.md: while another process holds the index,
// `cardex reindex` refuses with exit 1 and says what to do instead.
func TestReindexRefusesWhileIndexHeld(t *testing.T) {
	dir := t.TempDir()
	registrytest.SQLiteAt(t, dir)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestReindexHelperHoldsIndex$")
	cmd.Env = append(os.Environ(), "CARDEX_TEST_HOLD_INDEX="+filepath.Join(dir, "index"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper: %v", err)
		}
	}()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("helper said %q: %v", line, err)
	}
	code, out, errs := runCLI(t, "", "reindex", "--data", dir)
	if code != exitFail || out != "" || !strings.Contains(errs, "in use by another process") ||
		!strings.Contains(errs, "POST /api/v1/admin/reindex") {
		t.Fatalf("reindex beside a holder: %d %q %q", code, out, errs)
	}
}

func TestReindexBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"reindex", "--bogus"},
		{"reindex", "now"},
		{"reindex", "--database-url", "mysql://x"},
		{"reindex", "--data", ""},
	} {
		if code, out, errs := runCLI(t, "", args...); code != exitUsage || out != "" || !strings.Contains(errs, "Usage: cardex reindex") {
			t.Errorf("%v: %d %q %q", args, code, out, errs)
		}
	}
}
