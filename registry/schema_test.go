package registry_test

import (
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"gorm.io/gorm"
)

// compatible lists the database type names each Go type may live in.
var compatible = map[reflect.Type][]string{
	reflect.TypeFor[string]():     {"text", "varchar"},
	reflect.TypeFor[*string]():    {"text", "varchar"},
	reflect.TypeFor[bool]():       {"boolean", "bool"},
	reflect.TypeFor[int]():        {"integer", "int4", "int8", "bigint"},
	reflect.TypeFor[int64]():      {"integer", "int8", "bigint"},
	reflect.TypeFor[[]byte]():     {"blob", "bytea"},
	reflect.TypeFor[time.Time]():  {"datetime", "timestamptz"},
	reflect.TypeFor[*time.Time](): {"datetime", "timestamptz"},
}

// TestModelsMatchSchema migrates a fresh database and checks that every
// model field has a column of a compatible type and every column a field
// (CONTRIBUTING.md), on both dialects.
func TestModelsMatchSchema(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		db := s.WriteDB().WithContext(t.Context())
		tables, err := db.Migrator().GetTables()
		if err != nil {
			t.Fatal(err)
		}
		var modelTables []string
		for _, m := range registry.Models {
			stmt := &gorm.Statement{DB: db}
			if err := stmt.Parse(m); err != nil {
				t.Fatal(err)
			}
			table := stmt.Schema.Table
			modelTables = append(modelTables, table)
			cols, err := db.Migrator().ColumnTypes(m)
			if err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			if len(stmt.Schema.Fields) < 2 || len(cols) < 2 { // agent_groups has two
				t.Fatalf("%s: %d fields, %d columns: the check would be vacuous", table, len(stmt.Schema.Fields), len(cols))
			}
			dbCols := map[string]string{}
			for _, c := range cols {
				dbCols[c.Name()] = strings.ToLower(c.DatabaseTypeName())
			}
			for _, f := range stmt.Schema.Fields {
				if f.DBName == "" {
					continue
				}
				typ, ok := dbCols[f.DBName]
				if !ok {
					t.Errorf("%s.%s (field %s): no such column", table, f.DBName, f.Name)
					continue
				}
				want, known := compatible[f.FieldType]
				if !known || !slices.Contains(want, typ) {
					t.Errorf("%s.%s: column type %q does not hold Go %v (want one of %v)", table, f.DBName, typ, f.FieldType, want)
				}
				delete(dbCols, f.DBName)
			}
			for c := range dbCols {
				t.Errorf("%s.%s: column has no model field", table, c)
			}
		}
		for _, tb := range tables {
			if tb != "goose_db_version" && !strings.HasPrefix(tb, "sqlite_") && !slices.Contains(modelTables, tb) {
				t.Errorf("table %s has no model", tb)
			}
		}
	})
}

// TestInterruptedMigrationRerunsCleanly (docs/threats.md F.68): a migration
// that fails midway is rolled back whole, the recorded version stays at the
// last complete migration, and a corrected run applies it.
func TestInterruptedMigrationRerunsCleanly(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ctx := t.Context()
		base := fstest.MapFS{}
		err := fs.WalkDir(s.EmbeddedMigrations(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(s.EmbeddedMigrations(), p)
			base[p] = &fstest.MapFile{Data: b}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		latest := latestMigration(t, s)
		broken := maps(base, "99999_extra.sql", `-- +goose Up
CREATE TABLE extra (id INTEGER PRIMARY KEY, note TEXT NOT NULL);
INSERT INTO extra (id, note) VALUES (1, 'first');
INSERT INTO no_such_table (id) VALUES (1);
-- +goose Down
DROP TABLE extra;
`)
		if err := s.MigrateFS(ctx, broken); err == nil {
			t.Fatal("a failing migration reported success")
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v != latest {
			t.Fatalf("after the failed migration the version is %d, %v; want %d", v, err, latest)
		}
		if s.WriteDB().Migrator().HasTable("extra") {
			t.Fatal("the failed migration's table survived: it was not transactional")
		}
		fixed := maps(base, "99999_extra.sql", `-- +goose Up
CREATE TABLE extra (id INTEGER PRIMARY KEY, note TEXT NOT NULL);
INSERT INTO extra (id, note) VALUES (1, 'first');
-- +goose Down
DROP TABLE extra;
`)
		if err := s.MigrateFS(ctx, fixed); err != nil {
			t.Fatalf("re-run: %v", err)
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v != 99999 {
			t.Fatalf("after the re-run the version is %d, %v; want 99999", v, err)
		}
		var n int64
		if err := s.WriteDB().Table("extra").Count(&n).Error; err != nil || n != 1 {
			t.Fatalf("extra has %d rows, %v; want 1", n, err)
		}
		// The store's own set is now behind the database: not current.
		if ok, err := s.MigrationsCurrent(ctx); err != nil || ok {
			t.Fatalf("MigrationsCurrent = %v, %v; want false with an unknown newer migration applied", ok, err)
		}
	})
}

func maps(base fstest.MapFS, name, sql string) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range base {
		out[k] = v
	}
	out[name] = &fstest.MapFile{Data: []byte(sql)}
	return out
}

// latestMigration is the highest version among the store's embedded
// migrations: what a freshly opened store is at.
func latestMigration(t *testing.T, s *registry.Store) int64 {
	t.Helper()
	var latest int64
	err := fs.WalkDir(s.EmbeddedMigrations(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		num, _, ok := strings.Cut(path.Base(p), "_")
		if !ok {
			return nil
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return err
		}
		latest = max(latest, v)
		return nil
	})
	if err != nil || latest == 0 {
		t.Fatalf("embedded migrations: latest %d, %v", latest, err)
	}
	return latest
}
