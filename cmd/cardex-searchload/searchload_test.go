package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
)

// The whole measurement at a small scale: a fleet of 150 corpus agents,
// the real server built from this tree, every workload for a second. Every
// answer is a 200, the report has each run with its numbers, and the
// server stops with the command.
func TestSearchLoadSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs cardex serve")
	}
	bin := filepath.Join(t.TempDir(), "cardex")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.CommandContext(ctx, "go", append(args, "github.com/cardexhq/cardex/cmd/cardex")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-cardex", bin, "-agents", "150", "-hosts", "3", "-duration", "1s", "-clients", "1,3",
		"-repeated", "20", "-json"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if len(rep.Runs) != 4 || rep.Agents != 150 || rep.RSSBytes <= 0 || rep.Reindex <= 0 {
		t.Fatalf("report %+v", rep)
	}
	want := []string{"unique/1", "unique/3", "repeated/1", "repeated/3"}
	for i, r := range rep.Runs {
		if got := r.Workload + "/" + strconv.Itoa(r.Clients); got != want[i] {
			t.Errorf("run %d is %s, want %s", i, got, want[i])
		}
		if r.Requests == 0 || r.Statuses["200"] != r.Requests || r.NonOK != 0 || r.Transport != 0 ||
			r.P50ms <= 0 || r.P50ms > r.P99ms || r.CPUmsPerReq <= 0 {
			t.Errorf("run %s: %+v", want[i], r)
		}
	}
	if !strings.Contains(stderr.String(), "crawled and approved 150 agents") {
		t.Errorf("log:\n%s", stderr.String())
	}
}

func TestParseRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-agents", "0"},
		{"-hosts", "251"},
		{"-duration", "0s"},
		{"-clients", "1,x"},
		{"-clients", "0"},
		{"-repeated", "0"},
		{"extra"},
	} {
		if code := run(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{}); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// Unique queries do not repeat, have one to three words from the corpus,
// and are the same for a seed.
func TestQueryGen(t *testing.T) {
	a, b := newQueryGen(7, 300), newQueryGen(7, 300)
	seen := map[string]bool{}
	for range 2000 {
		q, ok := a.next()
		q2, _ := b.next()
		if !ok || q != q2 || seen[q] {
			t.Fatalf("query %q (ok %v, other %q, seen %v)", q, ok, q2, seen[q])
		}
		seen[q] = true
		if n := len(strings.Fields(q)); n < 1 || n > 3 {
			t.Fatalf("%q has %d words", q, n)
		}
	}
}

// The cost mode's cards are exactly at the size it names, under the card
// size limit, and parse as cards with 200 skills whose text has the
// searched word.
func TestCostCard(t *testing.T) {
	for _, i := range []int{0, 1, 99} {
		b, err := costCard(i)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != costCardBytes || len(b) > 512<<10 {
			t.Fatalf("card %d: %d bytes", i, len(b))
		}
		p, err := agentcard.Parse(b, agentcard.Options{CardURL: "https://cost.example/.well-known/agent-card.json"})
		if err != nil || p.Card == nil {
			t.Fatalf("card %d: %v", i, err)
		}
		if len(p.Card.Skills) != 200 || !strings.Contains(p.Card.Skills[199].Description, costWord) {
			t.Fatalf("card %d: %d skills", i, len(p.Card.Skills))
		}
	}
}
