package searchload

import (
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to look for the dropped database

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry/registrytest"
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
		"-repeated", "10", "-reindex=false", "-approve-single", "12", "-json"}, &stdout, &stderr)
	if code != bench.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	// Every agent crawled before any approval; 12 approved one by one,
	// the other 28 in bulk.
	if st := rep.Setup; st.Crawled <= 0 || st.ApprovedSingle != 12 || st.ApproveSingle <= 0 || st.ApprovedBulk != 28 || st.ApproveBulk <= 0 {
		t.Errorf("setup %+v", st)
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
	for _, line := range []string{"every agent crawled once", "approved 12 agents one request each", "crawled and approved 28 agents through the bulk API", "steady state"} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, stderr.String())
		}
	}
}

// -defaults with -database-url runs the same measurement on PostgreSQL
// with two replicas: the run creates its own database, both replicas
// answer their own clients' queries in every run, both reach steady state
// (every agent listed by each replica's own index, the first probe round
// done), the report names the store, the replicas and each one's numbers,
// and the database is gone afterwards.
func TestSearchLoadDefaultsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two cardex serve")
	}
	// A fresh database on the CARDEX_TEST_DATABASE_URL server (skips
	// without it, fails when CI=true): the run creates and drops its own
	// from there.
	server := registrytest.PostgresURL(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := bench.Build(ctx, t.TempDir(), bench.RaceEnabled)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"-defaults", "-database-url", server, "-replicas", "2", "-cardex", bin, "-agents", "40", "-hosts", "2",
		"-duration", "1s", "-clients", "2", "-repeated", "10", "-reindex=false", "-json"}, &stdout, &stderr)
	if code != bench.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Store != "postgres" || rep.Replicas != 2 || !rep.Defaults || rep.Agents != 40 || !strings.HasPrefix(rep.Database, "cardex_bench_") {
		t.Fatalf("report %+v", rep)
	}
	want := []string{"unique/after-approval/2", "unique/steady/2", "repeated/steady/2"}
	if len(rep.Runs) != len(want) {
		t.Fatalf("%d runs: %+v", len(rep.Runs), rep.Runs)
	}
	for i, r := range rep.Runs {
		if got := r.Workload + "/" + r.Phase + "/" + strconv.Itoa(r.Clients); got != want[i] {
			t.Errorf("run %d is %s, want %s", i, got, want[i])
		}
		if len(r.Replicas) != 2 {
			t.Fatalf("run %s: %d replicas", want[i], len(r.Replicas))
		}
		sum := 0
		for j, x := range r.Replicas {
			if x.Replica != j+1 || x.Requests == 0 || x.Statuses["200"] != x.Requests || x.Transport != 0 || x.Bad5xx != 0 ||
				x.CPUmsPerReq <= 0 || x.RSSBytes <= 0 {
				t.Errorf("run %s, replica %d: %+v", want[i], j+1, x)
			}
			sum += x.Requests
		}
		if r.Requests != sum || r.NonOK != 0 || r.Transport != 0 || r.Bad5xx != 0 {
			t.Errorf("run %s: total %+v, replicas' requests %d", want[i], r, sum)
		}
	}
	if len(rep.ReplicaTotals) != 2 || rep.RSSBytes != rep.ReplicaTotals[0].RSSBytes+rep.ReplicaTotals[1].RSSBytes ||
		rep.Probes != rep.ReplicaTotals[0].Probes+rep.ReplicaTotals[1].Probes || rep.Probes < 1 || rep.Setup.Steady <= 0 {
		t.Errorf("totals %+v, RSS %d, %v probes, steady after %s", rep.ReplicaTotals, rep.RSSBytes, rep.Probes, rep.Setup.Steady)
	}
	for _, line := range []string{"crawled and approved 40 agents through the bulk API",
		"replica 1: index lists them all", "replica 2: index lists them all",
		"replica 1 steady: every agent listed, index caught up", "replica 2 steady: every agent listed, index caught up",
		"dropped database " + rep.Database} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, stderr.String())
		}
	}
	db, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", rep.Database).Scan(&n); err != nil || n != 0 {
		t.Errorf("database %s: %d left, %v", rep.Database, n, err)
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
		{"-defaults", "-replicas", "2"},
		{"-replicas", "0"},
		{"-defaults", "-database-url", "postgres://127.0.0.1/x", "-replicas", "0"},
		{"-defaults", "-database-url", "postgres://127.0.0.1/x", "-replicas", "17"},
		{"-database-url", "postgres://127.0.0.1/x"},
		{"-defaults", "-database-url", "postgres://127.0.0.1/x", "-data", "x"},
		{"-defaults", "-database-url", "mysql://127.0.0.1/x"},
		{"-approve-single", "5"},
		{"-defaults", "-agents", "10", "-approve-single", "11"},
		{"-defaults", "-approve-single", "-1"},
	} {
		if code := Run(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{}); code != bench.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, bench.ExitUsage)
		}
	}
}

// -replicas defaults to 1, and to 2 with -database-url.
func TestParseReplicasDefault(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-defaults"}, 1},
		{[]string{"-defaults", "-database-url", "postgres://127.0.0.1/x"}, 2},
		{[]string{"-defaults", "-database-url", "postgres://127.0.0.1/x", "-replicas", "1"}, 1},
		{[]string{"-defaults", "-database-url", "postgresql://127.0.0.1/x", "-replicas", "3"}, 3},
	} {
		cfg, err := Parse(c.args, &bytes.Buffer{})
		if err != nil || cfg.Replicas != c.want {
			t.Errorf("%v: %+v, %v; want %d replicas", c.args, cfg, err, c.want)
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
