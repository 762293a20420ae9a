// Command cardex-bench measures a Cardex server under load, one
// subcommand per measurement (docs/benchmarks.md has the numbers and the
// method):
//
//	go run ./cmd/cardex-bench load -url http://127.0.0.1:8080 -token ADMIN_TOKEN -clients 200 -duration 30s
//	go run ./cmd/cardex-bench search -agents 100000
//	go run ./cmd/cardex-bench search -cost -agents 100 -hosts 10 -duration 60s
//
// load drives a running server with mixed reads and writes
// (internal/load); search builds and starts `cardex serve` over a loopback
// fleet of generated agents and measures its queries, or with -cost what
// anonymous requests cost (internal/searchload). `cardex-bench SUBCOMMAND
// -h` lists a subcommand's flags. Exit codes: 0 ok, 1 a failed run, 2 bad
// usage.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/load"
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/searchload"
)

// subcommands are cardex-bench's measurements, in the order usage lists
// them.
var subcommands = []struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}{
	{"load", "drive a running server with concurrent mixed reads and writes", load.Run},
	{"search", "measure search through a whole `cardex serve` over a loopback fleet (-cost: the cost of anonymous requests; -defaults: crawler and prober on)", searchload.Run},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return bench.ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return bench.ExitOK
	}
	for _, c := range subcommands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "cardex-bench: unknown subcommand %q\n", args[0])
	usage(stderr)
	return bench.ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cardex-bench SUBCOMMAND [flags]   (cardex-bench SUBCOMMAND -h lists its flags)")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
}
