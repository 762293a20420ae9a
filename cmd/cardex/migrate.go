package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
)

// runMigrate is `cardex migrate`: apply the embedded SQL migrations and
// print the schema version. Serve migrates at start-up too; this is for
// deployments that migrate as a separate step.
func runMigrate(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("cardex migrate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var sf storeFlags
	sf.register(fs, e.getenv)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cardex migrate [--data DIR] [--database-url URL]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "cardex migrate: takes no arguments")
		fs.Usage()
		return exitUsage
	}
	store, err := sf.open(ctx, nil)
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex migrate:", err)
		if errors.Is(err, errStoreFlags) {
			return exitUsage
		}
		return exitFail
	}
	defer store.Close()
	v, err := store.SchemaVersion(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex migrate:", err)
		return exitFail
	}
	fmt.Fprintf(e.stdout, "schema version %d (%s)\n", v, store.Dialect())
	return exitOK
}
