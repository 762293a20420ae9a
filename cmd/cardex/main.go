// Command cardex is the single Cardex binary: the registry server and the
// tools around it (verify, sign, keys, lint, crawl, reindex, migrate, token).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cardexhq/cardex/buildinfo"
)

// Exit codes shared by every subcommand (docs/configuration.md).
const (
	exitOK    = 0
	exitFail  = 1 // the answer is "no": not verified, lint errors, fetch failed
	exitUsage = 2 // bad flags, unknown subcommand, unreadable input
)

// env is what a subcommand may touch of the process, so tests can run
// commands in-process with their own streams and environment.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands is the CLI's route table.
var commands = []command{
	{"version", "print the Cardex version", runVersion},
	{"verify", "verify an agent card's signatures", (&verifyCmd{}).run},
	{"sign", "sign an agent card with a private key", runSign},
	{"keys", "generate a signing key and print the JWKS to publish", runKeys},
	{"serve", "run the registry: API, web UI, crawler, search and /metrics (--demo: a demo catalogue)", runServe},
	{"lint", "check an agent card and list its problems", newLintCommand(nil).run},
	{"crawl", "fetch, parse and verify one card URL (nothing stored)", runCrawl},
	{"migrate", "apply the SQL migrations", runMigrate},
	{"token", "create, list and revoke API tokens", runToken},
	{"catalog", "list, pause, resume and remove crawled AI Catalogs", runCatalog},
	{"reindex", "rebuild the search index of a stopped server", (&reindexCmd{}).run},
}

// networkCommands print what servers send (catalog: crawl errors): their
// output goes through termSafe.
var networkCommands = map[string]bool{"verify": true, "lint": true, "crawl": true, "catalog": true}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		applyServeRuntime(os.Getenv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(e.stdout)
		return exitOK
	case "--version", "-version":
		return runVersion(ctx, e, args[1:])
	}
	for _, c := range commands {
		if c.name == args[0] {
			if networkCommands[c.name] {
				e = networkOutput(e)
			}
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "cardex: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: cardex <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'cardex <command> -h' for a command's flags.")
}

// runVersion prints the module version, the source commit and the Go
// toolchain (`cardex version`, `cardex --version`).
func runVersion(_ context.Context, e *env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "cardex version: takes no arguments")
		return exitUsage
	}
	fmt.Fprintln(e.stdout, buildinfo.Get())
	return exitOK
}
