package searchload

import (
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"bytes"
	"context"
	"encoding/json"
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
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := bench.Build(ctx, t.TempDir(), bench.RaceEnabled)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"-cardex", bin, "-agents", "150", "-hosts", "3", "-duration", "1s", "-clients", "1,3",
		"-repeated", "20", "-json"}, &stdout, &stderr)
	if code != bench.ExitOK {
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
			r.P50ms <= 0 || r.P50ms > r.P99ms || r.CPUmsPerReq <= 0 || r.Phase != "" || r.Probes != 0 {
			t.Errorf("run %s: %+v", want[i], r)
		}
	}
	if !strings.Contains(stderr.String(), "crawled and approved 150 agents") {
		t.Errorf("log:\n%s", stderr.String())
	}
	if rep.Defaults || rep.Probes != 0 {
		t.Errorf("the quiet server probed: defaults %v, %v probes", rep.Defaults, rep.Probes)
	}
}

// -defaults runs the server with the crawler and the prober at their
// defaults: the agents are approved through the bulk API, the prober
// starts and probes their interfaces (on loopback, at the fleet's own A2A
// endpoints), and the unique queries run right after the approval and
// again in steady state, each run with the probes made during it.
func TestSearchLoadDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs cardex serve")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := bench.Build(ctx, t.TempDir(), bench.RaceEnabled)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"-defaults", "-cardex", bin, "-agents", "40", "-hosts", "2", "-duration", "1s", "-clients", "2",
		"-repeated", "10", "-reindex=false", "-json"}, &stdout, &stderr)
	if code != bench.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	want := []string{"unique/after-approval/2", "unique/steady/2", "repeated/steady/2"}
	if len(rep.Runs) != len(want) || !rep.Defaults || rep.Agents != 40 {
		t.Fatalf("report %+v", rep)
	}
	for i, r := range rep.Runs {
		if got := r.Workload + "/" + r.Phase + "/" + strconv.Itoa(r.Clients); got != want[i] {
			t.Errorf("run %d is %s, want %s", i, got, want[i])
		}
		if r.Requests == 0 || r.Transport != 0 || r.Bad5xx != 0 {
			t.Errorf("run %s: %+v", want[i], r)
		}
	}
	// Steady state came after the first probe round: the prober ran.
	if rep.Probes < 1 || rep.Setup.Steady <= 0 {
		t.Errorf("%v probes, steady after %s", rep.Probes, rep.Setup.Steady)
	}
	for _, line := range []string{"crawled and approved 40 agents through the bulk API", "steady state"} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, stderr.String())
		}
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
		{"-defaults", "-cost"},
		{"-defaults", "-populated", "-data", "x"},
	} {
		if code := Run(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{}); code != bench.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, bench.ExitUsage)
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
