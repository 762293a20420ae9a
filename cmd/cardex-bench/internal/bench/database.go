package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// Database is a fresh PostgreSQL database a run creates for itself, so a
// rerun never sees an earlier run's data. registry/registrytest does the
// same for tests, tied to testing.TB.
type Database struct {
	Name  string // cardex_bench_<random>
	URL   string // the server's URL with Name as its database
	admin *sql.DB
}

// CreateDatabase creates an empty database cardex_bench_<random> on the
// PostgreSQL server serverURL names (any database on it the user may
// connect to and create databases from).
func CreateDatabase(ctx context.Context, serverURL string) (*Database, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("database URL: want postgres://…, got %q", u.Redacted())
	}
	admin, err := sql.Open("pgx", serverURL)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	d := &Database{Name: "cardex_bench_" + hex.EncodeToString(b[:]), admin: admin}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+d.Name); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create database %s: %w", d.Name, err)
	}
	u.Path = "/" + d.Name
	d.URL = u.String()
	return d, nil
}

// Drop drops the database, ending the sessions still connected to it.
func (d *Database) Drop(ctx context.Context) error {
	defer d.admin.Close()
	if _, err := d.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", d.Name, err)
	}
	return nil
}
