package main

import (
	"context"
	"errors"
	"flag"
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

// open opens and migrates the store. It never takes the data directory's
// server lock: short-lived tools may run beside a server (docs/api.md);
// `serve` opens its store with registry.OpenOptions.ServerLock.
func (f *storeFlags) open(ctx context.Context, log *slog.Logger) (*registry.Store, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	return registry.Open(ctx, registry.OpenOptions{DataDir: f.data, DatabaseURL: f.databaseURL, Logger: log})
}
