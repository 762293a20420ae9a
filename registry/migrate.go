package registry

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/cardexhq/cardex/migrations"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// provider builds the goose provider over the embedded migrations of the
// store's dialect. On PostgreSQL it takes goose's advisory-lock session
// locker, so replicas starting together migrate one at a time; SQLite's
// single writer connection and BEGIN IMMEDIATE serialize it already. Each
// migration runs in its own transaction (docs/threats.md F.68).
func (s *Store) provider(fsys fs.FS) (*goose.Provider, error) {
	return newProvider(s.dialect, s.wsql, fsys)
}

// readProvider reads versions through the read pool, so /readyz never
// queues behind writes for SQLite's single writer connection.
func (s *Store) readProvider() (*goose.Provider, error) {
	return newProvider(s.dialect, s.rsql, s.migrations())
}

func newProvider(dialect string, db *sql.DB, fsys fs.FS) (*goose.Provider, error) {
	var opts []goose.ProviderOption
	gd := goose.DialectSQLite3
	if dialect == DialectPostgres {
		gd = goose.DialectPostgres
		// Waiting replicas retry every second (goose's default is 5 s) for
		// up to 5 minutes.
		l, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	return goose.NewProvider(gd, db, fsys, opts...)
}

func (s *Store) migrations() fs.FS {
	if s.dialect == DialectPostgres {
		return migrations.Postgres()
	}
	return migrations.SQLite()
}

// Migrate applies pending migrations. Open calls it; `cardex migrate` too.
// When nothing is pending it returns without taking the migration lock, so
// restarting replicas do not queue behind each other.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.provider(s.migrations())
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	// Through the writer: on a fresh database goose creates its version
	// table here, which a read-only connection could not.
	if current, target, err := p.GetVersions(ctx); err == nil && current == target {
		return nil
	}
	return s.migrateFS(ctx, s.migrations())
}

func (s *Store) migrateFS(ctx context.Context, fsys fs.FS) error {
	p, err := s.provider(fsys)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return translate(fmt.Errorf("migrate: %w", err))
	}
	return nil
}

// SchemaVersion is the version of the last applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	p, err := s.readProvider()
	if err != nil {
		return 0, err
	}
	v, err := p.GetDBVersion(ctx)
	return v, translate(err)
}

// MigrationsCurrent reports whether every embedded migration is applied
// (for /readyz: a replica running older code against a newer schema, or the
// reverse, is not ready).
func (s *Store) MigrationsCurrent(ctx context.Context) (bool, error) {
	p, err := s.readProvider()
	if err != nil {
		return false, err
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return false, translate(err)
	}
	return current == target, nil
}
