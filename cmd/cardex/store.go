package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cardexhq/cardex/registry"
)

// storeFlags are the global store flags of every command that touches the
// store (docs/configuration.md): --data and --database-url, defaulting to
// CARDEX_DATA and CARDEX_DATABASE_URL.
type storeFlags struct {
	data        string
	databaseURL string
}

// register adds --data and --database-url to fs, taking their defaults
// from the environment twins.
func (f *storeFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	def := func(name, fallback string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return fallback
	}
	fs.StringVar(&f.data, "data", def("CARDEX_DATA", "./cardex-data"), "data `directory` (SQLite database) when --database-url is empty")
	fs.StringVar(&f.databaseURL, "database-url", def("CARDEX_DATABASE_URL", ""), "PostgreSQL `URL` (postgres://…); empty means SQLite in --data")
}

// errStoreFlags marks a bad store flag (exit 2, not 1).
var errStoreFlags = errors.New("bad store flags")

// validate checks the flags without touching the store.
func (f *storeFlags) validate() error {
	switch {
	case f.databaseURL != "" && !strings.HasPrefix(f.databaseURL, "postgres://") && !strings.HasPrefix(f.databaseURL, "postgresql://"):
		return errors.Join(errStoreFlags, errors.New("--database-url must be a postgres:// URL"))
	case f.databaseURL == "" && f.data == "":
		return errors.Join(errStoreFlags, errors.New("--data is empty and no --database-url is given"))
	}
	return nil
}

// open opens and migrates the store, creating it when it does not exist
// (`cardex migrate`). It never takes the data directory's server lock:
// short-lived tools may run beside a server (docs/api.md); `serve` opens
// its store with registry.OpenOptions.ServerLock.
func (f *storeFlags) open(ctx context.Context, log *slog.Logger) (*registry.Store, error) {
	return f.openStore(ctx, log, false)
}

// openExisting opens a store that a server or `cardex migrate` created
// before, and refuses to create one: a tool such as `token create` given a
// --data that holds no database would otherwise print a token that no
// running server knows. The refusal carries errStoreFlags (exit 2) and
// names the flag.
func (f *storeFlags) openExisting(ctx context.Context, log *slog.Logger) (*registry.Store, error) {
	return f.openStore(ctx, log, true)
}

func (f *storeFlags) openStore(ctx context.Context, log *slog.Logger, mustExist bool) (*registry.Store, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	s, err := registry.Open(ctx, registry.OpenOptions{DataDir: f.data, DatabaseURL: f.databaseURL, Logger: log, MustExist: mustExist})
	if errors.Is(err, registry.ErrNoDatabase) {
		return nil, storeFlagError{fmt.Errorf("%w; check --data or --database-url (CARDEX_DATA, CARDEX_DATABASE_URL), "+
			"or create it with `cardex migrate` or `cardex serve`", err)}
	}
	return s, err
}

// storeFlagError is a store error caused by the flags: it reads as the
// error it wraps and counts as errStoreFlags.
type storeFlagError struct{ error }

func (e storeFlagError) Is(target error) bool { return target == errStoreFlags }
func (e storeFlagError) Unwrap() error        { return e.error }

// storeExitCode is the exit code of a store error: 2 for bad store flags
// (including a store that does not exist), 1 otherwise.
func storeExitCode(err error) int {
	if errors.Is(err, errStoreFlags) {
		return exitUsage
	}
	return exitFail
}
