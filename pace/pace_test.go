package pace

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// runUnits runs n background units of d each, one after another, and
// returns how long they took in all.
func runUnits(t *testing.T, g *Gate, n int, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for range n {
		done, err := g.Background(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		done()
	}
	return time.Since(start)
}

// With no interactive request, background work never waits and is never
// charged.
func TestQuietGateNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		if took := runUnits(t, g, 20, 100*time.Millisecond); took != 2*time.Second {
			t.Errorf("20 units of 100ms on a quiet gate took %s, want 2s", took)
		}
		if st := g.Stats(); st.Waited != 0 || st.Charged != 0 {
			t.Errorf("stats %+v, want nothing waited or charged", st)
		}
	})
}

// While an interactive request is in flight, background work gets its
// share of wall-clock time: 20 units of 100ms at a quarter take 8 s
// (less the burst the gate starts with), each waiting 300ms, below
// MaxWait.
func TestBusyGateKeepsBackgroundToItsShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		end := g.Begin()
		defer end()
		took := runUnits(t, g, 20, 100*time.Millisecond)
		// 2 s of work at 0.25 is 8 s; the first unit starts at once and
		// the last one's debt is not waited for: 8 s − 300 ms (the last
		// unit's 100 ms / 0.25 − 100 ms of it already run) − 50 ms burst.
		if took < 7500*time.Millisecond || took > 8*time.Second {
			t.Errorf("20 units of 100ms while busy took %s, want about 7.7s (a quarter of the time)", took)
		}
		if st := g.Stats(); st.Charged != 2*time.Second || st.InFlight != 1 {
			t.Errorf("stats %+v, want 2s charged, 1 in flight", st)
		}
	})
}

// Work waiting for the gate runs soon after the last interactive request
// ends: a quiet gate forgives the debt.
func TestQuietGateReleasesWaitingWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		end := g.Begin()
		runUnits(t, g, 1, time.Second) // 1 s owed at a quarter: a wait of ~4 s
		go func() {
			time.Sleep(100 * time.Millisecond)
			end()
		}()
		start := time.Now()
		done, err := g.Background(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		done()
		if took := time.Since(start); took > 100*time.Millisecond+DefaultQuiet+pollEvery {
			t.Errorf("waited %s after the last request ended 100ms in, want at most the quiet period and one poll later", took)
		}
	})
}

// A unit waiting for a busy gate gives up when its context ends.
func TestBackgroundStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		end := g.Begin()
		defer end()
		runUnits(t, g, 1, time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := g.Background(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want the context's deadline", err)
		}
		if took := time.Since(start); took != 300*time.Millisecond {
			t.Errorf("gave up after %s, want 300ms", took)
		}
	})
}

// A nil gate lets everything run: components built without one behave as
// before.
func TestNilGate(t *testing.T) {
	var g *Gate
	done, err := g.Background(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	done()
	g.Begin()()
	if g.Busy() || g.Stats() != (Stats{}) {
		t.Error("a nil gate is busy or has stats")
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	if got := g.Interactive(h); got == nil {
		t.Error("nil gate's Interactive returned nil")
	}
}

// The middleware counts a request in flight while its handler runs, and
// the gate stays busy for the quiet period after it.
func TestInteractiveMiddleware(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		var during int64
		h := g.Interactive(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			during = g.Stats().InFlight
			w.WriteHeader(http.StatusNoContent)
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if during != 1 || rec.Code != http.StatusNoContent || g.Stats().InFlight != 0 {
			t.Errorf("in flight during %d after %d, status %d", during, g.Stats().InFlight, rec.Code)
		}
		if !g.Busy() {
			t.Error("not busy right after a request")
		}
		time.Sleep(DefaultQuiet)
		if g.Busy() {
			t.Error("still busy a quiet period after the last request")
		}
	})
}

// However busy the gate, a unit waits at most MaxWait: background work
// always moves.
func TestMaxWaitBoundsEveryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		end := g.Begin()
		defer end()
		runUnits(t, g, 1, 10*time.Second) // 40 s owed at a quarter
		start := time.Now()
		done, err := g.Background(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		done()
		if took := time.Since(start); took != DefaultMaxWait {
			t.Errorf("waited %s, want MaxWait %s", took, DefaultMaxWait)
		}
	})
}

// Writes make the indexer yield but not the crawler's and the prober's
// writes, which keep submissions moving; reads make both yield.
func TestWritesPaceOnlyTheIndexer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{})
		end := g.BeginWrite()
		defer end()
		if g.Busy() || !g.Index().Yielding() || g.Index().Busy() {
			t.Errorf("a write: busy %v, index yielding %v, index busy %v", g.Busy(), g.Index().Yielding(), g.Index().Busy())
		}
		if took := runUnits(t, g, 20, 100*time.Millisecond); took != 2*time.Second {
			t.Errorf("records during a write took %s, want 2s unhindered", took)
		}
		start := time.Now()
		for range 20 {
			done, err := g.Index().Background(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			done()
		}
		if took := time.Since(start); took < 7500*time.Millisecond || took > 8*time.Second {
			t.Errorf("index batches during a write took %s, want about 7.7s (a quarter of the time)", took)
		}
		if st := g.Stats(); st.Writes != 1 || st.InFlight != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}
