// Package load is `cardex-bench load`: it drives a running Cardex server with concurrent
// clients of mixed reads and writes for a bounded time, then reports
// requests per second, status counts, latency percentiles per operation
// and the server's goroutine and memory growth read from /metrics.
//
//	go run ./cmd/cardex-bench load -url http://127.0.0.1:8080 -clients 200 -duration 30s -token ADMIN_TOKEN
//
// Every agent the run submits is removed when it ends (-keep leaves them
// and lists their ids in a file; -remove FILE removes those later).
//
// It exits 1 when any request got a 5xx or a transport error, or when the
// server's goroutines grew by more than -goroutine-slack once the run has
// settled; 2 on bad flags.
package load

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
)

// Config is every setting of a run.
type Config struct {
	URL            string
	Clients        int
	Duration       time.Duration
	Token          string
	WriteRatio     float64
	JSON           bool
	Timeout        time.Duration
	Settle         time.Duration
	GoroutineSlack int
	SubmitURL      string
	Keep           bool   // leave the submitted agents in the target
	AllowShed      bool   // 503 answers (Cardex shedding load) are reported, not failures
	KeepFile       string // where -keep lists their ids
	Remove         string // remove the agents listed in this file, and nothing else
}

// defaultGoroutineSlack is how many more goroutines than before the run a
// settled server may have: its crawler and indexer start and finish work
// on their own ticks (a crawl kicked by the run may still be in flight, a
// keep-alive connection of another client may be open), so an exact match
// would fail on noise; a leak per request or per client shows up as
// hundreds or thousands.
const defaultGoroutineSlack = 50

// Parse reads args (after the subcommand) into a Config, writing flag
// errors and -h to stderr.
func Parse(args []string, stderr io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("cardex-bench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "base `URL` of the Cardex server")
	fs.IntVar(&c.Clients, "clients", 200, "concurrent clients")
	fs.DurationVar(&c.Duration, "duration", 30*time.Second, "how long to send requests")
	fs.StringVar(&c.Token, "token", "", "admin API `token` (writes and admin reads need it; without it only anonymous reads run)")
	fs.Float64Var(&c.WriteRatio, "write-ratio", 0.1, "share of requests that are writes (submissions, approvals, crawl requests), 0 to 1")
	fs.BoolVar(&c.JSON, "json", false, "print the report as JSON")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "limit for one request")
	fs.DurationVar(&c.Settle, "settle", 10*time.Second, "how long to wait after the run for the server's goroutines to settle")
	fs.IntVar(&c.GoroutineSlack, "goroutine-slack", defaultGoroutineSlack, "goroutines the settled server may have beyond its count before the run")
	fs.StringVar(&c.SubmitURL, "submit-url", "https://load-{n}.example.com/",
		"card `URL` template of submissions: {n} becomes a number unique to the run, {ip} a distinct 127.0.0.0/8 address")
	fs.BoolVar(&c.AllowShed, "allow-shed", false, "report 503 answers (the server shedding load, with Retry-After) as shed instead of failing the run; for correctness runs on a loaded machine")
	fs.BoolVar(&c.Keep, "keep", false, "leave the agents the run submits in the target (default: remove them when the run ends) and list their ids in -keep-file")
	fs.StringVar(&c.KeepFile, "keep-file", "cardex-bench-load-agents.txt", "with -keep, the `file` that lists the submitted agents' ids, for -remove")
	fs.StringVar(&c.Remove, "remove", "", "remove the agents listed in `file` (written by a -keep run) and exit; needs an admin -token")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.Remove != "" {
		if c.Token == "" {
			return nil, errors.New("-remove needs an admin -token")
		}
		c.URL = strings.TrimSuffix(c.URL, "/")
		if c.Timeout <= 0 {
			return nil, errors.New("-timeout must be positive")
		}
		return c, nil
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-url %q is not an http(s) URL", c.URL)
	}
	c.URL = strings.TrimSuffix(c.URL, "/")
	switch {
	case c.Clients < 1 || c.Clients > 10000:
		return nil, fmt.Errorf("-clients %d is not between 1 and 10000", c.Clients)
	case c.Duration <= 0:
		return nil, errors.New("-duration must be positive")
	case c.WriteRatio < 0 || c.WriteRatio > 1:
		return nil, fmt.Errorf("-write-ratio %v is not between 0 and 1", c.WriteRatio)
	case c.WriteRatio > 0 && c.Token == "":
		return nil, errors.New("writes need an admin -token (or -write-ratio 0)")
	case c.Timeout <= 0 || c.Settle < 0 || c.GoroutineSlack < 0:
		return nil, errors.New("-timeout must be positive, -settle and -goroutine-slack not negative")
	case !strings.Contains(c.SubmitURL, "{n}") && !strings.Contains(c.SubmitURL, "{ip}"):
		return nil, fmt.Errorf("-submit-url %q has neither {n} nor {ip}: every submission needs its own URL", c.SubmitURL)
	}
	return c, nil
}

// Run parses args, drives the server, prints the report and returns the
// exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := Parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return bench.ExitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "cardex-bench load:", err)
		return bench.ExitUsage
	}
	if c.Remove != "" {
		var out strings.Builder
		err := removeRun(ctx, c, &out)
		fmt.Fprint(stdout, out.String())
		if err != nil {
			fmt.Fprintln(stderr, "cardex-bench load:", err)
			return bench.ExitFail
		}
		return bench.ExitOK
	}
	rep, err := drive(ctx, c)
	if err != nil {
		fmt.Fprintln(stderr, "cardex-bench load:", err)
		return bench.ExitFail
	}
	if rep.Created > 0 && c.Keep {
		fmt.Fprintf(stderr, "cardex-bench load: kept the %d agents this run submitted, listed in %s; remove them with: cardex-bench load -url %s -token TOKEN -remove %s\n",
			rep.Created, c.KeepFile, c.URL, c.KeepFile)
	}
	if c.JSON {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "cardex-bench load:", err)
		return bench.ExitFail
	}
	if fails := rep.failures(); len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintln(stderr, "cardex-bench load: FAIL:", f)
		}
		return bench.ExitFail
	}
	return bench.ExitOK
}
