package crawler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// The database decides what is due, cron only ticks (CONTRIBUTING.md): an
// agent due in 25 s is claimed at the first tick after that, not before.
func TestSchedulerTicksClaimDueAgents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		start := time.Now()
		q.add("now", "a.example", start)
		q.add("later", "b.example", start.Add(25*time.Second))
		p := newProbe(time.Second)
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: 10 * time.Second})
		s.Start()
		synctest.Wait()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := q.recordedCount(); got != 1 {
			t.Fatalf("after 2s recorded %d, want 1 (only the agent due now)", got)
		}
		time.Sleep(27 * time.Second) // t = 29s: ticks at 10s and 20s found nothing new
		synctest.Wait()
		if got := q.recordedCount(); got != 1 {
			t.Fatalf("after 29s recorded %d, want 1: the tick at 30s has not come", got)
		}
		time.Sleep(3 * time.Second) // the tick at 30s claims "later"; it takes 1s
		synctest.Wait()
		if got := q.recordedCount(); got != 2 {
			t.Fatalf("after 32s recorded %d, want 2", got)
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// Kick (a submission, POST /crawl) claims at once instead of at the next
// tick.
func TestSchedulerKickClaimsImmediately(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		p := newProbe(time.Millisecond)
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: time.Hour})
		s.Start()
		synctest.Wait()
		q.add("new", "a.example", time.Now())
		s.Kick()
		synctest.Wait()
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := q.recordedCount(); got != 1 {
			t.Fatalf("recorded %d after Kick, want 1", got)
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// A fixed pool: never more than Workers crawls at once, and a burst of due
// agents is worked through without waiting for ticks.
func TestSchedulerWorkerPoolBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		for i := range 100 {
			q.add(fmt.Sprintf("a%03d", i), fmt.Sprintf("h%03d.example", i), time.Now())
		}
		p := newProbe(time.Second)
		var observed atomic.Int64
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: time.Hour, Workers: 8,
			Observe: func(_ registry.FetchResult, err error) {
				if err == nil {
					observed.Add(1)
				}
			}})
		s.Start()
		time.Sleep(13*time.Second + time.Millisecond) // 100 agents / 8 workers = 13 rounds of 1 s
		synctest.Wait()
		if got := q.recordedCount(); got != 100 {
			t.Errorf("recorded %d, want 100", got)
		}
		if observed.Load() != 100 {
			t.Errorf("Observe saw %d recorded results, want 100", observed.Load())
		}
		if p.peak != 8 {
			t.Errorf("peak concurrency %d, want exactly 8 workers busy", p.peak)
		}
		if q.claims > 100/2+2 {
			t.Errorf("%d claims for 100 agents: claims are not batched", q.claims)
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// docs/threats.md B.27, docs/security.md: at most PerHost crawls of one host in
// flight, even when the queue hands out more (a lease expired under a long
// crawl).
func TestSchedulerPerHostCapInProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		q.ignoreCap = true
		for i := range 12 {
			q.add(fmt.Sprintf("a%02d", i), "one.example", time.Now())
		}
		p := newProbe(time.Second)
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: time.Hour, Workers: 8, PerHost: 2})
		s.Start()
		time.Sleep(6*time.Second + time.Millisecond)
		synctest.Wait()
		if got := q.recordedCount(); got != 12 {
			t.Errorf("recorded %d, want 12", got)
		}
		if got := p.hostMax["one.example"]; got != 2 {
			t.Errorf("peak crawls of one host %d, want 2", got)
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// Shutdown lets in-flight crawls finish and record, claims nothing more,
// and releases leases.
func TestSchedulerShutdownDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		for i := range 6 {
			q.add(fmt.Sprintf("a%d", i), fmt.Sprintf("h%d.example", i), time.Now())
		}
		p := newProbe(5 * time.Second)
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: time.Second, Workers: 4})
		s.Start()
		time.Sleep(time.Second)
		synctest.Wait()
		if len(p.started) != 4 {
			t.Fatalf("%d crawls started, want 4", len(p.started))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		began := time.Now()
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(began); waited != 4*time.Second {
			t.Errorf("Shutdown returned after %v, want the 4s the in-flight crawls needed", waited)
		}
		if got := q.recordedCount(); got != 4 {
			t.Errorf("recorded %d, want the 4 in-flight crawls", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(p.started) != 4 {
			t.Errorf("%d crawls started after Shutdown", len(p.started)-4)
		}
		s.Kick() // harmless after Shutdown
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("second Shutdown: %v", err)
		}
	})
}

// When Shutdown's context ends first, in-flight crawls are abandoned (not
// recorded as failures: the host did nothing wrong) and their leases are
// released for another replica.
func TestSchedulerShutdownAbandons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		q.add("slow", "a.example", time.Now())
		p := newProbe(time.Hour)
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: time.Second, LeaseTTL: 4 * time.Hour})
		s.Start()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		err := s.Shutdown(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
		}
		if got := q.recordedCount(); got != 0 {
			t.Errorf("recorded %d abandoned crawls", got)
		}
		if !slices.Equal(q.released, []string{"slow"}) {
			t.Errorf("released %v, want [slow]", q.released)
		}
	})
}

// Shutdown of a scheduler that never started still releases leases.
func TestSchedulerShutdownWithoutStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		q.add("x", "a.example", time.Now())
		if _, err := q.ClaimDue(t.Context(), "owner-a", time.Now(), time.Minute, 10, 2); err != nil {
			t.Fatal(err)
		}
		s := syncScheduler(t, q, newProbe(0), SchedulerConfig{})
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		s.Start() // no-op after Shutdown
		synctest.Wait()
		if !slices.Equal(q.released, []string{"x"}) {
			t.Errorf("released %v, want [x]", q.released)
		}
	})
}

// A claimed agent that waited in the queue until its lease is nearly over
// is skipped, not crawled into the expiry: its lease lapses and it is
// claimed again. A crawl gets only what is left of its lease minus a
// quarter TTL for the write.
func TestSchedulerSkipsQueuedAgentsWithExpiringLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newMemQueue()
		for i := range 4 {
			q.add(fmt.Sprintf("a%d", i), fmt.Sprintf("h%d.example", i), time.Now())
		}
		p := newProbe(1900 * time.Millisecond)
		s := syncScheduler(t, q, p, SchedulerConfig{Tick: time.Hour, Workers: 1, LeaseTTL: 4 * time.Second})
		s.Start()
		// a0 runs 0–1.9s; a1 starts with 2.1s of lease left, so 1.1s of
		// budget, and is cut off at 3.0s; a2 and a3 have 1s left then,
		// which is the write's quarter: skipped.
		time.Sleep(3500 * time.Millisecond)
		synctest.Wait()
		if got, st := q.recordedCount(), s.Stats(); got != 1 || st.Expired != 2 || len(p.started) != 2 {
			t.Errorf("recorded %d, started %d, stats %+v; want 1 recorded, 2 started, 2 expired", got, len(p.started), st)
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
