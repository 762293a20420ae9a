package registrytest

import (
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/migrations"
	"github.com/cardexhq/cardex/registry"
)

// NewestMigration is the highest version among a dialect's embedded
// migration files (goose names them NNNNN_name.sql): the schema version of
// a freshly migrated store.
func NewestMigration(t testing.TB, dialect string) int64 {
	t.Helper()
	fsys := migrations.SQLite()
	if dialect == registry.DialectPostgres {
		fsys = migrations.Postgres()
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("registrytest: migrations: %v, %d files", err, len(names))
	}
	var newest int64
	for _, n := range names {
		v, err := strconv.ParseInt(n[:max(strings.IndexByte(n, '_'), 0)], 10, 64)
		if err != nil {
			t.Fatalf("registrytest: migration %s: %v", n, err)
		}
		newest = max(newest, v)
	}
	return newest
}
