package search

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The gate runs at most its slots at once, lets a bounded number wait a
// bounded time, and refuses the rest at once with ErrOverloaded (which
// callers answer like ErrTimeout: 503).
func TestGateBoundsRunningAndWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(1, 2, 100*time.Millisecond)
		ctx := context.Background()
		if err := g.enter(ctx); err != nil {
			t.Fatal(err)
		}
		// Two wait; the third finds the queue full and is refused at once.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() { errs[i] = g.enter(ctx) })
		}
		synctest.Wait()
		start := time.Now()
		if err := g.enter(ctx); !errors.Is(err, ErrOverloaded) || !errors.Is(err, ErrTimeout) || time.Since(start) != 0 {
			t.Fatalf("third waiter: %v after %s", err, time.Since(start))
		}
		// Freeing the slot admits one waiter; the other gives up after the
		// wait.
		g.leave()
		wg.Wait()
		admitted, refused := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				admitted++
			case errors.Is(err, ErrOverloaded):
				refused++
			default:
				t.Fatalf("waiter: %v", err)
			}
		}
		if admitted != 1 || refused != 1 || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("admitted %d refused %d after %s", admitted, refused, time.Since(start))
		}
		g.leave()
		// A waiter whose context ends stops waiting with the context's error.
		if err := g.enter(ctx); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		if err := g.enter(cctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled waiter: %v", err)
		}
		if n := g.waiting.Load(); n != 0 {
			t.Fatalf("%d still counted as waiting", n)
		}
	})
}

// Search answers from the cache without a slot, and computes nothing when
// no slot frees up in time.
func TestSearchOverloadedButCached(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("a", "Weather Now", "Forecasts", skill("f", "Forecast", "Hourly forecast")), "submitted")
	x := openTest(t, src)
	x.gate = newGate(1, 0, time.Millisecond)
	if _, err := x.Search(t.Context(), Query{Q: "forecast"}); err != nil {
		t.Fatal(err)
	}
	if err := x.gate.enter(t.Context()); err != nil { // every slot busy
		t.Fatal(err)
	}
	defer x.gate.leave()
	if r, err := x.Search(t.Context(), Query{Q: "forecast"}); err != nil || len(r.Hits) != 1 {
		t.Fatalf("cached answer while busy: %v %v", r, err)
	}
	if _, err := x.Search(t.Context(), Query{Q: "hourly"}); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("new query while busy: %v", err)
	}
	if _, err := x.Skills(t.Context(), SkillQuery{Q: "hourly"}); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("skills while busy: %v", err)
	}
}
