// Package migrations holds Cardex's versioned SQL schema, one goose
// migration set per dialect, embedded into the binary (docs/design.md, CONTRIBUTING.md
// habit 6). Every migration runs in its own transaction (docs/threats.md
// F.68): an interrupted run leaves the previous version recorded and re-runs
// cleanly.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// SQLite is the migration set for SQLite.
func SQLite() fs.FS { return sub("sqlite") }

// Postgres is the migration set for PostgreSQL.
func Postgres() fs.FS { return sub("postgres") }

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		// fs.Sub fails only on an invalid path, which is a constant here.
		panic(err)
	}
	return f
}
