package search

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/cardexhq/cardex/registry"
)

// builtIndex builds an index of three agents in dir and closes it,
// returning the live generation's directory.
func builtIndex(t *testing.T, dir string, src *memSource) string {
	t.Helper()
	x, err := Open(dir, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Rebuild(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(dir, x.Status().Generation)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	return gen
}

func threeAgents() *memSource {
	src := newMemSource()
	for _, id := range []string{"one", "two", "three"} {
		src.put(testAgent(id, "Agent "+id, "helps with invoices", skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	}
	return src
}

func zapFiles(t *testing.T, gen string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(gen, "store", "*.zap"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no segments in %s: %v", gen, err)
	}
	return m
}

// docs/threats.md G.69: each kind of damage is detected at open, queries
// answer ErrNotReady (never a 500 loop), and a rebuild into a new
// directory brings the index back and removes the damaged generation.
func TestCorruptIndexDetectedAndRebuilt(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, gen string)
		reason error
	}{
		{"truncated zap", func(t *testing.T, gen string) {
			for _, z := range zapFiles(t, gen) {
				st, _ := os.Stat(z)
				if err := os.Truncate(z, st.Size()/2); err != nil {
					t.Fatal(err)
				}
			}
		}, ErrCorrupt},
		{"deleted root.bolt", func(t *testing.T, gen string) {
			if err := os.Remove(filepath.Join(gen, "store", "root.bolt")); err != nil {
				t.Fatal(err)
			}
		}, ErrCorrupt},
		{"empty index_meta.json", func(t *testing.T, gen string) {
			if err := os.WriteFile(filepath.Join(gen, "index_meta.json"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, ErrCorrupt},
		{"unsupported segment version", func(t *testing.T, gen string) {
			// The zap footer ends with version (4 bytes) and CRC (4 bytes).
			for _, z := range zapFiles(t, gen) {
				b, err := os.ReadFile(z)
				if err != nil {
					t.Fatal(err)
				}
				binary.BigEndian.PutUint32(b[len(b)-8:], 99)
				if err := os.WriteFile(z, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, ErrCorrupt},
		{"CURRENT names a missing generation", func(t *testing.T, gen string) {
			if err := os.RemoveAll(gen); err != nil {
				t.Fatal(err)
			}
		}, ErrCorrupt},
		{"old mapping version", func(t *testing.T, gen string) {
			idx, err := bleve.Open(gen)
			if err != nil {
				t.Fatal(err)
			}
			if err := idx.SetInternal(keyMappingVersion, []byte("cardex-search-0")); err != nil {
				t.Fatal(err)
			}
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
		}, ErrOldMapping},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := threeAgents()
			dir := t.TempDir()
			gen := builtIndex(t, dir, src)
			c.damage(t, gen)

			x, err := Open(dir, Options{LockTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer x.Close()
			need, reason := x.NeedsRebuild()
			if !need || !errors.Is(reason, c.reason) {
				t.Fatalf("NeedsRebuild = %v, %v; want true, %v", need, reason, c.reason)
			}
			if _, err := x.Search(t.Context(), Query{Q: "invoices"}); !errors.Is(err, ErrNotReady) {
				t.Fatalf("Search on damaged index: %v, want ErrNotReady", err)
			}
			if err := x.Rebuild(t.Context(), src); err != nil {
				t.Fatal(err)
			}
			r := mustSearch(t, x, Query{Q: "invoices"})
			if r.TotalSize != 3 {
				t.Fatalf("after rebuild: %d hits", r.TotalSize)
			}
			if _, err := os.Stat(gen); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("damaged generation still there: %v", err)
			}
		})
	}
}

func TestMissingIndexAndStaleBuildDirs(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "gen-0000000007.building", "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if need, reason := x.NeedsRebuild(); !need || !errors.Is(reason, ErrMissing) {
		t.Fatalf("fresh dir: %v %v", need, reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "gen-0000000007.building")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("half-built generation left behind")
	}
	if err := x.Rebuild(t.Context(), threeAgents()); err != nil {
		t.Fatal(err)
	}
	if st := x.Status(); !st.Ready || st.Generation != "gen-0000000001" || st.AppliedSeq != 3 {
		t.Fatalf("status %+v", st)
	}
}

// docs/threats.md G.70: a second opener fails with ErrLocked instead of
// hanging — through the directory lock, and through bolt_timeout when only
// Bolt's lock is held.
func TestSecondOpenerFailsFast(t *testing.T) {
	dir := t.TempDir()
	gen := builtIndex(t, dir, threeAgents())
	x, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	// Someone holds the generation's root.bolt but not our LOCK file.
	held, err := bleve.Open(gen)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open with root.bolt held: %v, want ErrLocked", err)
	}
	// A hang check, not a benchmark: both attempts return long before a
	// blocked open would.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("second opener took %v", d)
	}
}

// failingSource fails every read.
type failingSource struct{ calls int }

var errSourceDown = errors.New("source down")

func (f *failingSource) Changes(context.Context, int64, int) ([]registry.Change, int64, error) {
	f.calls++
	return nil, 0, errSourceDown
}
func (f *failingSource) LatestSeq(context.Context) (int64, error) { f.calls++; return 0, errSourceDown }
func (f *failingSource) Agents(context.Context, []string) ([]registry.Agent, error) {
	f.calls++
	return nil, errSourceDown
}
func (f *failingSource) ListAgents(context.Context, string, int) ([]registry.Agent, error) {
	f.calls++
	return nil, errSourceDown
}

// G.69: when the rebuild cannot run (SQL down), Run backs off
// exponentially instead of retrying in a hot loop.
func TestRunBacksOffWhenRebuildFails(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	synctest.Test(t, func(t *testing.T) {
		src := &failingSource{}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		err := NewIndexer(x, src, IndexerOptions{PollInterval: time.Second, MaxBackoff: time.Minute}).Run(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run = %v", err)
		}
		// Waits 1s, 2s, 4s … 60s, then every minute: 15 attempts in ten
		// minutes, not thousands.
		if src.calls < 10 || src.calls > 20 {
			t.Fatalf("%d attempts in 10 minutes", src.calls)
		}
	})
}
