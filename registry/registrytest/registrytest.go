// Package registrytest opens real stores for tests: SQLite files in
// t.TempDir() and fresh PostgreSQL databases on the server named by
// CARDEX_TEST_DATABASE_URL (CONTRIBUTING.md: real databases, one fresh
// database per test).
package registrytest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/cardexhq/cardex/registry"
)

// EnvDatabaseURL names the PostgreSQL server tests create databases on.
const EnvDatabaseURL = "CARDEX_TEST_DATABASE_URL"

// SQLite opens a migrated store in a fresh SQLite file under t.TempDir(),
// closed at cleanup.
func SQLite(t testing.TB) *registry.Store {
	t.Helper()
	return SQLiteAt(t, t.TempDir())
}

// SQLiteAt opens a migrated SQLite store in dir, closed at cleanup.
func SQLiteAt(t testing.TB, dir string) *registry.Store {
	t.Helper()
	s, err := registry.Open(context.Background(), registry.OpenOptions{DataDir: dir})
	if err != nil {
		t.Fatalf("open SQLite store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresURL creates a fresh, empty database cardex_test_<random> on the
// CARDEX_TEST_DATABASE_URL server, drops it at cleanup, and returns its URL.
// It skips the test when the variable is unset, and fails it instead when
// CI=true.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabaseURL)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set, and CI=true requires the PostgreSQL tests", EnvDatabaseURL)
		}
		t.Skipf("%s is not set: skipping the PostgreSQL variant", EnvDatabaseURL)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvDatabaseURL, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvDatabaseURL, err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "cardex_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	u.Path = "/" + name
	return u.String()
}

// Postgres opens a migrated store in a fresh PostgreSQL database (see
// PostgresURL), closed and dropped at cleanup.
func Postgres(t testing.TB) *registry.Store {
	t.Helper()
	dsn := PostgresURL(t)
	s, err := registry.Open(context.Background(), registry.OpenOptions{DatabaseURL: dsn})
	if err != nil {
		t.Fatalf("open PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// EachStore runs f as a subtest on each available dialect: "sqlite"
// always, "postgres" when CARDEX_TEST_DATABASE_URL is set (and required
// when CI=true). Subtests run in parallel with each other.
func EachStore(t *testing.T, f func(t *testing.T, s *registry.Store)) {
	t.Helper()
	t.Run(registry.DialectSQLite, func(t *testing.T) {
		t.Parallel()
		f(t, SQLite(t))
	})
	t.Run(registry.DialectPostgres, func(t *testing.T) {
		t.Parallel()
		f(t, Postgres(t))
	})
}

// Service is a Service over s with a fixed clock when now is non-nil.
func Service(s *registry.Store, now func() time.Time) *registry.Service {
	return registry.NewService(s, registry.ServiceConfig{Now: now})
}
