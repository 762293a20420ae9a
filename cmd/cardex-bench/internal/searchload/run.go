// Package searchload is `cardex-bench search`: it measures search through
// the whole `cardex serve` at catalogue scale, from a clean checkout:
//
//	go run ./cmd/cardex-bench search -agents 100000
//
// It starts a loopback fleet serving N generated cards (search/corpus,
// seed 42: twelve domains, 1–10 skills each, Zipf-distributed words), runs
// `cardex serve` on SQLite with rate limits off (the binary is built unless
// -cardex names one), submits every card URL with an admin token, approves
// each agent once the crawler has fetched it, waits until the index lists
// them all, then sends `GET /api/v1/agents?q=…&pageSize=20` for -duration
// per run:
//
//   - unique: every query asked once (1–3 words from one skill of a
//     corpus agent), at 1 and 32 clients;
//   - repeated: a list of 2,000 such queries, asked round robin after one
//     warming pass, at 1 and 32 clients.
//
// It reports requests per second, p50/p99 latency, every non-200 status,
// the server's CPU time per request (from /proc, meaningful on a shared
// machine where wall latency is not), the load average, the server's RSS
// after the runs and the time of a full index rebuild (POST
// /api/v1/admin/reindex). With -data DIR the server's data is kept; a later
// run with -data DIR -populated reuses it (the index is rebuilt at start
// when its mapping changed) and skips the slow setup. Everything listens on 127.0.0.0/8 and stops by
// itself. Exit 1 when a step fails or any answer was a transport error or a
// 5xx other than 503 with Retry-After.
//
// With -defaults -database-url URL it runs the same measurement on
// PostgreSQL: a fresh database cardex_bench_<random> on that server,
// -replicas `cardex serve` processes on it (two by default), each with its
// own data directory and so its own index, every replica loaded by its own
// -clients at once and reported side by side (defaults.go).
//
// With -cost it measures instead what anonymous requests cost over 100
// cards at the size limit (cost.go, docs/benchmarks.md "Cost of anonymous
// requests"):
//
//	go run ./cmd/cardex-bench search -cost -agents 100 -hosts 10 -duration 60s
package searchload

import (
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Config is every setting of a run.
type Config struct {
	Agents   int
	Hosts    int
	Duration time.Duration
	Clients  []int
	Repeated int
	Cardex   string
	Data     string
	Seed     uint64
	Setup    time.Duration
	JSON     bool
	Reindex  bool
	// Populated: -data already holds the -agents agents, submitted and
	// approved by an earlier run (kept with -data); only wait for the
	// index.
	Populated bool
	// ApproveSingle (-defaults): approve this many agents one request
	// each (32 clients) before the rest in bulk, to measure both ways.
	ApproveSingle int
	// Cost: measure the cost of anonymous requests over cards at the size
	// limit instead (cost.go).
	Cost bool
	// Defaults: the server runs with the crawler and the prober at their
	// defaults, the agents are approved through the bulk API, and the
	// unique queries run twice: right after the approval and in steady
	// state (defaults.go).
	Defaults bool
	// DatabaseURL names a PostgreSQL server: the run creates a fresh
	// database on it, runs every replica on that database and drops it at
	// the end (-defaults only). Empty: SQLite.
	DatabaseURL string
	// Replicas is how many `cardex serve` processes run on the one
	// database, each with its own --data directory (its own index); more
	// than one needs DatabaseURL.
	Replicas int
}

// Parse reads args (after the subcommand) into a Config, writing flag
// errors and -h to stderr.
func Parse(args []string, stderr io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("cardex-bench search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.Agents, "agents", 100_000, "agents in the fleet, submitted, crawled and approved")
	fs.IntVar(&c.Hosts, "hosts", 50, "loopback addresses the fleet serves from (127.0.0.1 counting up)")
	fs.DurationVar(&c.Duration, "duration", 20*time.Second, "length of each measured run")
	clients := fs.String("clients", "1,32", "comma-separated client counts, one run of each workload per count")
	fs.IntVar(&c.Repeated, "repeated", 2000, "queries in the repeated list")
	fs.StringVar(&c.Cardex, "cardex", "", "cardex `binary` to run (default: go build ./cmd/cardex)")
	fs.StringVar(&c.Data, "data", "", "data `directory` for the server (default: a temporary one, removed at the end)")
	fs.Uint64Var(&c.Seed, "seed", 42, "corpus and query seed")
	fs.DurationVar(&c.Setup, "setup-timeout", 30*time.Minute, "limit for submitting, crawling, approving and indexing")
	fs.BoolVar(&c.JSON, "json", false, "print the report as JSON")
	fs.BoolVar(&c.Reindex, "reindex", true, "time a full index rebuild after the runs")
	fs.BoolVar(&c.Cost, "cost", false, "measure what anonymous requests cost over -agents cards of 510 KiB (cost.go) instead")
	fs.BoolVar(&c.Defaults, "defaults", false, "run the server with the crawler and the prober at their defaults, approve through the bulk API and measure right after the approval and again in steady state (defaults.go)")
	fs.BoolVar(&c.Populated, "populated", false, "-data already holds the agents of an earlier run: skip submitting and approving")
	fs.IntVar(&c.ApproveSingle, "approve-single", 0, "with -defaults: approve this many agents one request each (32 clients) before approving the rest through the bulk API")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "PostgreSQL server `URL` (postgres://…) for -defaults: the run creates a database cardex_bench_<random> on it, runs every replica on it and drops it at the end")
	fs.IntVar(&c.Replicas, "replicas", 0, "`cardex serve` processes on the one database, each with its own index, loaded and reported side by side (default 1, or 2 with -database-url; more than 1 needs -database-url)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	replicasSet := false
	fs.Visit(func(f *flag.Flag) { replicasSet = replicasSet || f.Name == "replicas" })
	if !replicasSet {
		c.Replicas = 1
		if c.DatabaseURL != "" {
			c.Replicas = 2
		}
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.Clients, err = parseInts(*clients); err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	switch {
	case c.Agents < 1:
		return nil, errors.New("-agents must be at least 1")
	case c.Hosts < 1 || c.Hosts > 250:
		return nil, errors.New("-hosts must be 1 to 250")
	case c.Duration <= 0:
		return nil, errors.New("-duration must be positive")
	case c.Repeated < 1:
		return nil, errors.New("-repeated must be at least 1")
	case c.Cost && (c.Populated || c.Data != ""):
		return nil, errors.New("-cost runs on a fresh temporary catalogue: no -data or -populated")
	case c.Defaults && (c.Cost || c.Populated):
		return nil, errors.New("-defaults measures from the approval of a fresh catalogue: no -cost or -populated")
	case c.ApproveSingle < 0 || c.ApproveSingle > c.Agents:
		return nil, errors.New("-approve-single must be from 0 to -agents")
	case c.ApproveSingle > 0 && !c.Defaults:
		return nil, errors.New("-approve-single needs -defaults")
	case c.Populated && c.Data == "":
		return nil, errors.New("-populated needs -data")
	case c.Replicas < 1 || c.Replicas > 16:
		return nil, errors.New("-replicas must be 1 to 16")
	case c.Replicas > 1 && c.DatabaseURL == "":
		return nil, errors.New("-replicas more than 1 needs -database-url: a SQLite store belongs to one server")
	case c.DatabaseURL != "" && !c.Defaults:
		return nil, errors.New("-database-url measures -defaults on PostgreSQL: add -defaults")
	case c.DatabaseURL != "" && c.Data != "":
		return nil, errors.New("-database-url runs on a fresh database dropped at the end: no -data")
	case c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return nil, errors.New("-database-url must be a postgres:// URL")
	}
	return c, nil
}

// Run parses args (after `search`), measures, prints the report and
// returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := Parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return bench.ExitOK
		}
		fmt.Fprintln(stderr, "cardex-bench search:", err)
		return bench.ExitUsage
	}
	if cfg.Cost {
		rep, err := measureCost(ctx, cfg, stderr)
		if rep != nil {
			if werr := rep.write(stdout, cfg.JSON); werr != nil && err == nil {
				err = werr
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "cardex-bench search:", err)
			return bench.ExitFail
		}
		return bench.ExitOK
	}
	rep, err := measure(ctx, cfg, stderr)
	if rep != nil {
		if werr := rep.write(stdout, cfg.JSON); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "cardex-bench search:", err)
		return bench.ExitFail
	}
	if rep.failures() > 0 {
		fmt.Fprintf(stderr, "cardex-bench search: %d transport errors or 5xx answers without Retry-After\n", rep.failures())
		return bench.ExitFail
	}
	return bench.ExitOK
}
