package leasework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// queue is a lease queue in memory: Claim hands out pending jobs, at most
// perHost leases per host (0: no cap), and a lease is held until its job's
// result is recorded or the queue's leases are released.
type queue struct {
	mu       sync.Mutex
	pending  []job
	perHost  int
	held     map[string]int
	asked    []int // free of every claim
	got      []int // jobs every claim returned
	ran      []int
	running  int
	peak     int
	batches  [][]int
	released int // leases given up at Release
	releases int // calls of Release
	wakes    int
	d        time.Duration   // how long a job runs
	dur      []time.Duration // how long job i runs, when given
}

type job struct {
	id   int
	host string
}

func newQueue(n int, d time.Duration) *queue {
	q := &queue{held: map[string]int{}, d: d}
	q.add(n, func(i int) string { return fmt.Sprintf("h%d", i) })
	return q
}

func (q *queue) add(n int, host func(int) string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	base := len(q.pending) + len(q.ran)
	for i := range n {
		q.pending = append(q.pending, job{id: base + i, host: host(base + i)})
	}
}

func (q *queue) claim(_ context.Context, free int) ([]job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, free)
	var out, left []job
	for _, j := range q.pending {
		if len(out) == free || (q.perHost > 0 && q.held[j.host] >= q.perHost) {
			left = append(left, j)
			continue
		}
		q.held[j.host]++
		out = append(out, j)
	}
	q.pending = left
	q.got = append(q.got, len(out))
	return out, nil
}

func (q *queue) run(ctx context.Context, j job) (job, bool) {
	q.mu.Lock()
	q.ran = append(q.ran, j.id)
	q.running++
	q.peak = max(q.peak, q.running)
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.running--
		q.mu.Unlock()
	}()
	d := q.d
	if j.id < len(q.dur) {
		d = q.dur[j.id]
	}
	select {
	case <-time.After(d):
		return j, true
	case <-ctx.Done():
		return job{}, false
	}
}

func (q *queue) record(_ context.Context, batch []job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]int, len(batch))
	for i, j := range batch {
		ids[i] = j.id
		q.held[j.host]--
	}
	q.batches = append(q.batches, ids)
}

func (q *queue) release(context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releases++
	for h, n := range q.held {
		q.released += n
		delete(q.held, h)
	}
	return nil
}

// snapshot is what the queue saw, copied under its lock.
type snapshot struct {
	asked, got, ran                 []int
	peak, released, releases, wakes int
	sizes, ids                      []int // of the batches recorded; every id recorded, sorted
}

func (q *queue) snap() snapshot {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := snapshot{asked: slices.Clone(q.asked), got: slices.Clone(q.got), ran: slices.Clone(q.ran),
		peak: q.peak, released: q.released, releases: q.releases, wakes: q.wakes}
	for _, b := range q.batches {
		s.sizes = append(s.sizes, len(b))
		s.ids = append(s.ids, b...)
	}
	slices.Sort(s.ids)
	return s
}

func (q *queue) config(workers int) Config[job, job] {
	return Config[job, job]{Claim: q.claim, Run: q.run, Record: q.record, Release: q.release, Workers: workers,
		Wake: func(context.Context) { q.mu.Lock(); q.wakes++; q.mu.Unlock() }}
}

func newRunner(t *testing.T, cfg Config[job, job]) *Runner[job, job] {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func shutdown(t *testing.T, r *Runner[job, job]) {
	t.Helper()
	if err := r.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Results are recorded BatchSize at a time, a partial batch BatchDelay
// after its first result, and the last one as soon as nothing is left
// running or queued; every result exactly once.
func TestBatchesBySizeDelayAndIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(100, time.Second)
		cfg := q.config(32)
		cfg.BatchSize, cfg.BatchDelay = 10, 50*time.Millisecond
		r := newRunner(t, cfg)
		r.Start()
		// 32 workers finish together each second: three full batches, then
		// the 2 left over after 50 ms; at 4 s the last 4 go at once.
		time.Sleep(4*time.Second + time.Millisecond)
		synctest.Wait()
		s := q.snap()
		want := []int{10, 10, 10, 2, 10, 10, 10, 2, 10, 10, 10, 2, 4}
		if !slices.Equal(s.sizes, want) {
			t.Errorf("batches %v, want %v", s.sizes, want)
		}
		if len(s.ids) != 100 || s.ids[0] != 0 || s.ids[99] != 99 || len(slices.Compact(s.ids)) != 100 {
			t.Errorf("recorded %d results, want 0…99 once each", len(s.ids))
		}
		if got := r.InFlight(); got != 0 {
			t.Errorf("InFlight %d, want 0", got)
		}
		shutdown(t, r)
	})
}

// A fixed pool: never more than Workers jobs run at once; without a batch
// size each result is recorded alone on its worker; a claim waits for half
// the room (4 × Workers) to be free, so 100 one-second jobs on 8 workers
// take 13 s and 7 claims, not one per job.
func TestPoolBoundAndClaimsBatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(100, time.Second)
		r := newRunner(t, q.config(8))
		r.Start()
		time.Sleep(13*time.Second - time.Millisecond)
		synctest.Wait()
		if s := q.snap(); len(s.sizes) != 96 {
			t.Errorf("%d recorded after 12.999 s, want 96", len(s.sizes))
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		s := q.snap()
		if len(s.sizes) != 100 || slices.Max(s.sizes) != 1 || len(slices.Compact(s.ids)) != 100 {
			t.Errorf("batches %v, want 100 of one result each", s.sizes)
		}
		if s.peak != 8 {
			t.Errorf("peak %d jobs at once, want 8", s.peak)
		}
		// 32 at once, then 16 each time half the room is free; the claims
		// after the last 4 find nothing.
		if want := []int{32, 16, 16, 16, 16, 16}; len(s.asked) <= len(want) || !slices.Equal(s.asked[:len(want)], want) ||
			!slices.Equal(s.got[:len(want)], []int{32, 16, 16, 16, 16, 4}) || slices.Max(s.got[len(want):]) != 0 {
			t.Errorf("claims asked for %v and got %v, want %v first", s.asked, s.got, want)
		}
		shutdown(t, r)
	})
}

// The ticker claims what became due; Kick claims at once; Wake runs after
// every claim pass.
func TestTickAndKick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(0, time.Millisecond)
		cfg := q.config(2)
		cfg.Tick = 10 * time.Second
		r := newRunner(t, cfg)
		r.Start()
		synctest.Wait()
		q.add(1, func(int) string { return "a" })
		time.Sleep(9 * time.Second)
		synctest.Wait()
		if s := q.snap(); len(s.ran) != 0 {
			t.Fatalf("ran %v before the first tick", s.ran)
		}
		time.Sleep(time.Second + time.Millisecond) // the tick at 10 s
		synctest.Wait()
		if s := q.snap(); len(s.ran) != 1 {
			t.Fatalf("ran %v after the tick, want [0]", s.ran)
		}
		q.add(1, func(int) string { return "b" })
		r.Kick()
		synctest.Wait()
		if s := q.snap(); len(s.ran) != 2 {
			t.Fatalf("ran %v after Kick, want [0 1]", s.ran)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		shutdown(t, r)
		s := q.snap()
		if len(s.sizes) != 2 {
			t.Errorf("recorded %v, want 2 results", s.sizes)
		}
		// Start, the tick, Kick, and the kick of each finished job.
		if s.wakes != len(s.asked) || s.wakes < 3 {
			t.Errorf("%d wakes for %d claim passes", s.wakes, len(s.asked))
		}
	})
}

// The idle signal can arrive while the recorder is busy writing, together
// with the last result: the result is written at once all the same, not
// BatchDelay later. Job 0 ends at 1 s and is written at 1.1 s (BatchDelay)
// for a second; job 1 ends at 1.5 s, the pool goes idle, and job 1 is
// written as soon as the first write ends, at 2.1 s. Repeated: the
// recorder's choice between two ready signals is random.
func TestIdleWhileRecording(t *testing.T) {
	for range 10 {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(2, 0)
			q.dur = []time.Duration{time.Second, 1500 * time.Millisecond}
			start := time.Now()
			var mu sync.Mutex
			var at []time.Duration
			cfg := q.config(2)
			cfg.BatchSize, cfg.BatchDelay = 2, 100*time.Millisecond
			cfg.Record = func(ctx context.Context, batch []job) {
				mu.Lock()
				at = append(at, time.Since(start))
				mu.Unlock()
				q.record(ctx, batch)
				time.Sleep(time.Second)
			}
			r := newRunner(t, cfg)
			r.Start()
			time.Sleep(4 * time.Second)
			synctest.Wait()
			mu.Lock()
			if s := q.snap(); !slices.Equal(s.sizes, []int{1, 1}) || !slices.Equal(at, []time.Duration{1100 * time.Millisecond, 2100 * time.Millisecond}) {
				t.Errorf("batches %v written at %v, want [1 1] at [1.1s 2.1s]", s.sizes, at)
			}
			mu.Unlock()
			shutdown(t, r)
		})
	}
}

// After a short claim (a per-host cap held it back) a finished job does not
// claim again: its lease is held until its batch is written, which kicks.
// Six jobs of one host capped at 2: three claims that find work, one that
// finds none, each batch written as soon as the pool goes idle.
func TestShortClaimWaitsForBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(0, time.Second)
		q.add(6, func(int) string { return "one" })
		q.perHost = 2
		cfg := q.config(4)
		cfg.BatchSize, cfg.BatchDelay = 64, time.Hour
		r := newRunner(t, cfg)
		r.Start()
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		s := q.snap()
		if !slices.Equal(s.sizes, []int{2, 2, 2}) || s.peak != 2 {
			t.Errorf("batches %v, peak %d; want [2 2 2], 2", s.sizes, s.peak)
		}
		if want := []int{16, 16, 16, 16}; !slices.Equal(s.asked, want) || !slices.Equal(s.got, []int{2, 2, 2, 0}) {
			t.Errorf("claims asked for %v and got %v, want %v and [2 2 2 0]", s.asked, s.got, want)
		}
		shutdown(t, r)
	})
}

// Shutdown lets running jobs finish, skips queued ones, writes the last
// batch, then releases the leases left (the queued jobs'); it claims and
// runs nothing more, and a second call returns at once.
func TestShutdownDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(6, 5*time.Second)
		cfg := q.config(4)
		cfg.BatchSize, cfg.BatchDelay = 64, time.Hour
		r := newRunner(t, cfg)
		r.Start()
		time.Sleep(time.Second)
		synctest.Wait()
		began := time.Now()
		shutdown(t, r)
		if waited := time.Since(began); waited != 4*time.Second {
			t.Errorf("Shutdown returned after %v, want the 4 s the running jobs needed", waited)
		}
		s := q.snap()
		if !slices.Equal(s.sizes, []int{4}) || len(s.ran) != 4 || s.released != 2 || s.releases != 1 {
			t.Errorf("batches %v, ran %v, released %d in %d calls; want [4], 4 ran, 2 released in 1", s.sizes, s.ran, s.released, s.releases)
		}
		time.Sleep(time.Minute)
		r.Kick()
		synctest.Wait()
		err := r.Shutdown(t.Context())
		if s := q.snap(); err != nil || len(s.ran) != 4 || s.releases != 1 {
			t.Errorf("second Shutdown = %v, ran %d, %d releases", err, len(s.ran), s.releases)
		}
	})
}

// When Shutdown's context ends first, running jobs are abandoned (their
// context is cancelled, nothing is recorded), the leases are released and
// Shutdown returns the context's error.
func TestShutdownAbandons(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(1, time.Hour)
		r := newRunner(t, q.config(2))
		r.Start()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		began := time.Now()
		if err := r.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
		}
		if waited := time.Since(began); waited != 3*time.Second {
			t.Errorf("Shutdown returned after %v, want 3s", waited)
		}
		if s := q.snap(); len(s.sizes) != 0 || s.released != 1 {
			t.Errorf("recorded %v, released %d; want nothing recorded, 1 released", s.sizes, s.released)
		}
	})
}

// Shutdown before Start still releases; Start after Shutdown does nothing.
func TestShutdownWithoutStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(3, time.Second)
		r := newRunner(t, q.config(2))
		shutdown(t, r)
		r.Start()
		synctest.Wait()
		if s := q.snap(); s.releases != 1 || len(s.asked) != 0 {
			t.Errorf("%d releases, claims %v; want 1 release, no claim", s.releases, s.asked)
		}
	})
}

// Release's error comes back from Shutdown.
func TestShutdownReturnsReleaseError(t *testing.T) {
	q := newQueue(0, time.Second)
	cfg := q.config(1)
	failed := errors.New("database gone")
	cfg.Release = func(context.Context) error { return failed }
	r := newRunner(t, cfg)
	if err := r.Shutdown(t.Context()); !errors.Is(err, failed) {
		t.Errorf("Shutdown = %v, want %v", err, failed)
	}
}

// A claim that fails ends the pass; the next kick claims again.
func TestClaimErrorEndsPass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(2, time.Second)
		cfg := q.config(2)
		fail := true
		cfg.Claim = func(ctx context.Context, free int) ([]job, error) {
			if fail {
				fail = false
				return nil, errors.New("busy")
			}
			return q.claim(ctx, free)
		}
		r := newRunner(t, cfg)
		r.Start()
		synctest.Wait()
		if s := q.snap(); len(s.ran) != 0 {
			t.Fatalf("ran %v after a failed claim", s.ran)
		}
		r.Kick()
		time.Sleep(time.Second)
		synctest.Wait()
		if s := q.snap(); len(s.sizes) != 2 {
			t.Errorf("recorded %v after the second claim, want 2", s.sizes)
		}
		shutdown(t, r)
	})
}

func TestNewRejects(t *testing.T) {
	q := newQueue(0, 0)
	for name, mod := range map[string]func(*Config[job, job]){
		"no claim":      func(c *Config[job, job]) { c.Claim = nil },
		"no run":        func(c *Config[job, job]) { c.Run = nil },
		"no record":     func(c *Config[job, job]) { c.Record = nil },
		"no workers":    func(c *Config[job, job]) { c.Workers = 0 },
		"negative tick": func(c *Config[job, job]) { c.Tick = -time.Second },
	} {
		cfg := q.config(1)
		mod(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestBudget(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		left, want time.Duration
	}{
		{2 * time.Minute, time.Minute},       // fresh: half the TTL
		{80 * time.Second, 50 * time.Second}, // ends a quarter TTL (30 s) before the lease
		{30 * time.Second, 0},
		{10 * time.Second, -20 * time.Second},
	} {
		if got := Budget(2*time.Minute, now.Add(tc.left), now); got != tc.want {
			t.Errorf("Budget with %v of the lease left = %v, want %v", tc.left, got, tc.want)
		}
	}
}

// Pace is asked before every Record, batched or on the worker, and told
// when it is done; a Pace that makes writes wait holds the results back
// until it lets them through.
func TestPaceGatesEveryRecord(t *testing.T) {
	for _, batch := range []int{0, 10} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(20, time.Second)
				cfg := q.config(20)
				cfg.BatchSize = batch
				var mu sync.Mutex
				begun, ended := 0, 0
				cfg.Pace = func(ctx context.Context) (func(), error) {
					mu.Lock()
					begun++
					mu.Unlock()
					time.Sleep(5 * time.Second) // a busy gate
					return func() { mu.Lock(); ended++; mu.Unlock() }, nil
				}
				r := newRunner(t, cfg)
				r.Start()
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if s := q.snap(); len(s.ids) != 0 {
					t.Errorf("%d results recorded while the gate held them", len(s.ids))
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				s := q.snap()
				mu.Lock()
				defer mu.Unlock()
				if len(s.ids) != 20 || begun != len(s.sizes) || ended != begun {
					t.Errorf("%d recorded in %d writes; pace begun %d, ended %d", len(s.ids), len(s.sizes), begun, ended)
				}
				shutdown(t, r)
			})
		})
	}
}
