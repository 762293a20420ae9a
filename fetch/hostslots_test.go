package fetch

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// docs/threats.md K.100: four spellings of one address hold one budget of
// two, not four of two.
func TestHostSlotsSpellingsCountOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHostSlots(2)
		spellings := []string{"127.0.0.4", "[::ffff:127.0.0.4]", "http://127.0.0.4.:8080/a2a", "2130706436"}
		got := 0
		for _, s := range spellings {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			if _, err := h.Acquire(ctx, s, UseCrawl); err == nil {
				got++
			} else if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: %v", s, err)
			}
			cancel()
		}
		if got != 2 || h.InFlight("::ffff:7f00:4") != 2 {
			t.Fatalf("%d acquired, %d in flight, want 2 of 2", got, h.InFlight("127.0.0.4"))
		}
	})
}

// docs/threats.md K.98: probes hold at most their share of a host, so a
// crawl of the host gets a slot at once while probes pile up; waiting
// probes beyond the share are turned away instead of holding workers.
func TestHostSlotsProbesLeaveCrawlsRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHostSlots(2)
		if h.Share() != 1 {
			t.Fatalf("share %d, want 1", h.Share())
		}
		rel, err := h.Acquire(t.Context(), "victim.example", UseProbe)
		if err != nil {
			t.Fatal(err)
		}
		waitErr := make(chan error, 1)
		go func() {
			r, err := h.Acquire(t.Context(), "VICTIM.example.", UseProbe)
			if err == nil {
				r()
			}
			waitErr <- err
		}()
		synctest.Wait() // the second probe waits for the share
		if _, err := h.Acquire(t.Context(), "victim.example", UseProbe); !errors.Is(err, ErrHostBusy) {
			t.Fatalf("third probe: %v, want ErrHostBusy", err)
		}
		// A claim check is never turned away because probes wait
		// (docs/threats.md K.101): it takes a free slot as a crawl does.
		clrel, err := h.Acquire(t.Context(), "victim.example", UseClaim)
		if err != nil {
			t.Fatalf("claim check while probes wait: %v", err)
		}
		clrel()
		start := time.Now()
		crel, err := h.Acquire(t.Context(), "victim.example", UseCrawl)
		if err != nil || time.Since(start) != 0 {
			t.Fatalf("crawl waited %v (%v) behind probes", time.Since(start), err)
		}
		if n := h.InFlight("victim.example"); n != 2 {
			t.Fatalf("%d in flight, want 2", n)
		}
		// The cap still holds for crawls: a second crawl waits.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		if _, err := h.Acquire(ctx, "victim.example", UseCrawl); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("crawl beyond the cap: %v", err)
		}
		cancel()
		rel()
		synctest.Wait()
		if err := <-waitErr; err != nil {
			t.Fatalf("waiting probe: %v", err)
		}
		crel()
		crel() // idempotent
		if n := h.InFlight("victim.example"); n != 0 || len(h.hosts) != 0 {
			t.Fatalf("%d in flight, %d hosts tracked after every release", n, len(h.hosts))
		}
	})
}
