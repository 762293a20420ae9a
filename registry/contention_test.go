package registry_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// TestWriterContention (docs/threats.md F.63): many goroutines writing
// through one store, and a second store on the same SQLite file (a `token
// create` beside a server), never see SQLITE_BUSY.
func TestWriterContention(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		var second *registry.Service
		if s.Dialect() == registry.DialectSQLite {
			dir := s.DataDir()
			s2, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s2.Close() })
			second = newService(s2, c)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		fail := func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		for w := range 16 {
			wg.Go(func() {
				for i := range 10 {
					a, err := svc.Submit(t.Context(), anonymous, fmt.Sprintf("https://c%d-%d.example.com/", w, i), "")
					if err != nil {
						fail(err)
						continue
					}
					if _, err := svc.SetVisibility(t.Context(), admin, a.ID, registry.VisibilityInternal); err != nil {
						fail(err)
					}
					if _, err := svc.ClaimDue(t.Context(), fmt.Sprint("w", w), c.Now(), time.Minute, 2, 2); err != nil {
						fail(err)
					}
				}
			})
		}
		if second != nil {
			wg.Go(func() {
				for i := range 20 {
					if _, _, err := second.CreateToken(t.Context(), registry.TokenRequest{Role: registry.RoleReader, Name: fmt.Sprint("cli-", i)}); err != nil {
						fail(err)
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("%d errors, first: %v", len(errs), errs[0])
		}
		page, _ := svc.List(t.Context(), admin, registry.ListQuery{})
		if page.TotalSize != 160 {
			t.Fatalf("%d agents", page.TotalSize)
		}
		if second != nil {
			toks, _ := second.ListTokens(t.Context())
			var check string
			if err := s.WriteDB().Raw("PRAGMA integrity_check").Scan(&check).Error; err != nil || check != "ok" || len(toks) != 20 {
				t.Fatalf("integrity_check %q, %v; %d tokens", check, err, len(toks))
			}
		}
	})
}

// TestBusyExhaustedIsUnavailable (F.63): when another process holds the
// SQLite write lock past the busy timeout, the write fails with
// ErrUnavailable (503 + Retry-After), not a raw SQLITE_BUSY.
func TestBusyExhaustedIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	holder := registrytest.SQLiteAt(t, dir)
	other, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx := holder.WriteDB().Begin() // BEGIN IMMEDIATE: takes the write lock
	if err := tx.Exec("INSERT INTO changes (agent_id, kind, at) VALUES ('x', 'submitted', ?)", time.Now().UTC()).Error; err != nil {
		t.Fatal(err)
	}
	svc := newService(other, newClock())
	_, err = svc.Submit(t.Context(), anonymous, "https://a.example.com/", "")
	tx.Rollback()
	if !errors.Is(err, registry.ErrUnavailable) {
		t.Fatalf("Submit under a held lock: %v", err)
	}
	if _, err := svc.Submit(t.Context(), anonymous, "https://a.example.com/", ""); err != nil {
		t.Fatalf("after the lock is released: %v", err)
	}
}

// TestReadOnlyIsUnavailable (docs/threats.md F.66): a write against a
// read-only database rolls back with ErrUnavailable; committed data stays
// readable and intact, and writes work again once the database is writable.
func TestReadOnlyIsUnavailable(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://a.example.com/")
		setReadOnly := readOnlySwitch(t, s)
		setReadOnly(true)
		_, err := svc.Submit(ctx, anonymous, "https://b.example.com/", "")
		if !errors.Is(err, registry.ErrUnavailable) {
			t.Fatalf("Submit on a read-only database: %v", err)
		}
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionReject, registry.ActionRequest{}); !errors.Is(err, registry.ErrUnavailable) {
			t.Fatalf("Act on a read-only database: %v", err)
		}
		got, err := svc.Get(ctx, anonymous, a.ID)
		if err != nil || got.Status != registry.StatusPending {
			t.Fatalf("committed data: %+v, %v", got, err)
		}
		setReadOnly(false)
		if _, err := svc.Submit(ctx, anonymous, "https://b.example.com/", ""); err != nil {
			t.Fatalf("after recovery: %v", err)
		}
		page, _ := svc.List(ctx, admin, registry.ListQuery{})
		audit, _, _ := svc.Audit(ctx, admin, 0, 100)
		if page.TotalSize != 2 || len(audit) != 2 {
			t.Fatalf("%d agents, %d audit entries: a failed write left rows behind", page.TotalSize, len(audit))
		}
	})
}

// readOnlySwitch makes the store's database refuse writes the way a
// read-only mount does: SQLite's query_only pragma on the single writer
// connection (SQLITE_READONLY), PostgreSQL's default_transaction_read_only
// on the database (SQLSTATE 25006).
func readOnlySwitch(t *testing.T, s *registry.Store) func(bool) {
	if s.Dialect() == registry.DialectSQLite {
		return func(on bool) {
			if err := s.WriteDB().Exec(fmt.Sprintf("PRAGMA query_only = %t", on)).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	var name string
	if err := s.WriteDB().Raw("SELECT current_database()").Scan(&name).Error; err != nil {
		t.Fatal(err)
	}
	adminDB, err := sql.Open("pgx", os.Getenv(registrytest.EnvDatabaseURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adminDB.Close() })
	pool, _ := s.WriteDB().DB()
	return func(on bool) {
		if _, err := adminDB.ExecContext(context.Background(), fmt.Sprintf("ALTER DATABASE %s SET default_transaction_read_only = %t", name, on)); err != nil {
			t.Fatal(err)
		}
		// New sessions pick the setting up: drop the idle ones.
		pool.SetMaxIdleConns(0)
		pool.SetMaxIdleConns(10)
	}
}

// TestSecondServerFailsFast (docs/threats.md F.67): a second server on the
// same data directory fails at once with ErrDataDirLocked; tools that do
// not take the server lock still open it.
func TestSecondServerFailsFast(t *testing.T) {
	dir := t.TempDir()
	first, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir, ServerLock: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = registry.Open(t.Context(), registry.OpenOptions{DataDir: dir, ServerLock: true})
	if !errors.Is(err, registry.ErrDataDirLocked) || time.Since(start) > 2*time.Second {
		t.Fatalf("second server: %v after %v", err, time.Since(start))
	}
	tool, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir})
	if err != nil {
		t.Fatalf("a tool beside the server: %v", err)
	}
	tool.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: dir, ServerLock: true})
	if err != nil {
		t.Fatalf("after the first server stopped: %v", err)
	}
	again.Close()
}
