package registry_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"gorm.io/gorm"
)

func TestOpenMigratesAndIsCurrent(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ok, err := s.MigrationsCurrent(t.Context())
		if err != nil || !ok {
			t.Fatalf("MigrationsCurrent = %v, %v; want true", ok, err)
		}
		v, err := s.SchemaVersion(t.Context())
		if want := latestMigration(t, s); err != nil || v != want {
			t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, want)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(t.Name(), s.Dialect()) {
			t.Fatalf("dialect %q in test %q", s.Dialect(), t.Name())
		}
		// Migrating again is a no-op.
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSQLitePragmasOnEveryConnection: WAL, foreign keys, NORMAL sync and
// the busy timeout come from the DSN, so the writer and every reader have
// them (docs/design.md "Dependencies"; docs/threats.md F.63); readers cannot write.
func TestSQLitePragmasOnEveryConnection(t *testing.T) {
	s := registrytest.SQLite(t)
	for name, db := range map[string]*gorm.DB{"writer": s.WriteDB(), "reader": s.ReadDB()} {
		for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1", "busy_timeout": "5000"} {
			var got string
			if err := db.Raw("PRAGMA " + pragma).Scan(&got).Error; err != nil || got != want {
				t.Errorf("%s: PRAGMA %s = %q, %v; want %q", name, pragma, got, err, want)
			}
		}
	}
	if err := s.ReadDB().Exec("INSERT INTO changes (agent_id, kind, at) VALUES ('x', 'submitted', '2026-01-01')").Error; err == nil {
		t.Fatal("the read pool accepted a write")
	}
	var check string
	if err := s.WriteDB().Raw("PRAGMA integrity_check").Scan(&check).Error; err != nil || check != "ok" {
		t.Fatalf("integrity_check %q, %v", check, err)
	}
}

// TestReplicasMigrateTogether: replicas starting at once on one fresh
// PostgreSQL database all open; goose's advisory-lock session locker makes
// them migrate one at a time.
func TestReplicasMigrateTogether(t *testing.T) {
	url := registrytest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := registry.Open(t.Context(), registry.OpenOptions{DatabaseURL: url})
			if err == nil {
				var ok bool
				ok, err = s.MigrationsCurrent(t.Context())
				if err == nil && !ok {
					err = errors.New("migrations not current after Open")
				}
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}

// TestSQLiteLargeColumnsLast: in a SQLite row a column past a large value
// is reached only by walking that value's overflow pages, so the columns a
// listing reads come before the large ones (migration 00220; docs/benchmarks.md
// "Cost of anonymous requests"): card_views' rendering is its last column.
func TestSQLiteLargeColumnsLast(t *testing.T) {
	s := registrytest.SQLite(t)
	var cols []struct {
		Cid  int
		Name string
	}
	if err := s.ReadDB().Raw("PRAGMA table_info(card_views)").Scan(&cols).Error; err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	want := "agent_id seq rev shape protocol_versions verdict problems summary rendered"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("card_views columns %q, want %q", got, want)
	}
}
