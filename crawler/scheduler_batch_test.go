package crawler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// memBatch is memQueue with RecordFetches: it keeps the size of every
// batch written and fails the next `fail` calls as a whole with
// registry.ErrUnavailable.
type memBatch struct {
	*memQueue
	bmu   sync.Mutex
	sizes []int
	calls int
	fail  int
}

func (b *memBatch) RecordFetches(ctx context.Context, owner string, batch []registry.AgentFetch) ([]error, error) {
	b.bmu.Lock()
	b.calls++
	if b.fail > 0 {
		b.fail--
		b.bmu.Unlock()
		return nil, fmt.Errorf("database restarting: %w", registry.ErrUnavailable)
	}
	b.sizes = append(b.sizes, len(batch))
	b.bmu.Unlock()
	errs := make([]error, len(batch))
	for i, f := range batch {
		errs[i] = b.memQueue.RecordFetch(ctx, owner, f.AgentID, f.Result)
	}
	return errs, nil
}

func (b *memBatch) batches() ([]int, int) {
	b.bmu.Lock()
	defer b.bmu.Unlock()
	return slices.Clone(b.sizes), b.calls
}

// batchScheduler is syncScheduler over a memBatch, with process as the
// crawl of each agent.
func batchScheduler(t *testing.T, b *memBatch, process func(context.Context, registry.DueAgent) (registry.FetchResult, bool), cfg SchedulerConfig) *Scheduler {
	t.Helper()
	f, err := fetch.New(fetch.Config{Policy: fetch.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registry, cfg.Fetcher, cfg.Owner = b, f, "owner-a"
	s, err := NewScheduler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.process = process
	return s
}

func newMemBatch(n int) *memBatch {
	q := newMemQueue()
	for i := range n {
		q.add(fmt.Sprintf("a%03d", i), fmt.Sprintf("h%03d.example", i), time.Now())
	}
	return &memBatch{memQueue: q}
}

// Results are written BatchSize at a time, a partial batch BatchDelay
// after its first result, and the last one as soon as nothing is left
// running or queued; every result is recorded exactly once.
func TestSchedulerBatchesResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMemBatch(100)
		p := newProbe(time.Second)
		s := batchScheduler(t, b, p.process, SchedulerConfig{Tick: time.Hour, Workers: 32, BatchSize: 10, BatchDelay: 50 * time.Millisecond})
		s.Start()
		// 32 workers finish together each second: three full batches,
		// then the 2 left over after 50 ms; at 4 s the last 4 go at once.
		time.Sleep(4*time.Second + time.Millisecond)
		synctest.Wait()
		sizes, calls := b.batches()
		want := []int{10, 10, 10, 2, 10, 10, 10, 2, 10, 10, 10, 2, 4}
		if !slices.Equal(sizes, want) || calls != len(want) {
			t.Errorf("batches %v (%d calls), want %v", sizes, calls, want)
		}
		if got := b.recordedCount(); got != 100 {
			t.Errorf("recorded %d, want 100", got)
		}
		if st := s.Stats(); st.Recorded != 100 || st.Batches != int64(len(want)) || st.InFlight != 0 {
			t.Errorf("stats %+v", st)
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// Shutdown writes the results still waiting for their batch to fill
// before it returns and releases leases: no finished crawl is lost.
func TestSchedulerBatchFlushedOnShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMemBatch(5)
		slow := func(ctx context.Context, a registry.DueAgent) (registry.FetchResult, bool) {
			d := time.Second
			if a.ID >= "a003" {
				d = 10 * time.Second
			}
			time.Sleep(d)
			return registry.FetchResult{NextFetchAt: time.Now().Add(time.Hour)}, true
		}
		s := batchScheduler(t, b, slow, SchedulerConfig{Tick: time.Hour, Workers: 8, BatchSize: 64, BatchDelay: time.Hour})
		s.Start()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := b.recordedCount(); got != 0 {
			t.Fatalf("recorded %d before the batch filled or the scheduler went idle", got)
		}
		start := time.Now()
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 8*time.Second {
			t.Errorf("Shutdown returned after %v, want the 8s the slow crawls needed", waited)
		}
		sizes, _ := b.batches()
		if got := b.recordedCount(); got != 5 || !slices.Equal(sizes, []int{5}) {
			t.Errorf("recorded %d in batches %v, want all 5 in one", got, sizes)
		}
		if len(b.released) != 0 {
			t.Errorf("leases released %v: every result was recorded, none should be left", b.released)
		}
	})
}

// A batch that fails as a whole with ErrUnavailable is tried once more;
// when the retry fails too its results are dropped (counted as record
// errors) and their leases left to expire, so the agents are crawled again
// later rather than held.
func TestSchedulerBatchRetriedOnceThenDropped(t *testing.T) {
	for _, tc := range []struct {
		fail, recorded, errors int
	}{{fail: 1, recorded: 3}, {fail: 2, errors: 3}} {
		t.Run(fmt.Sprintf("%d failures", tc.fail), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newMemBatch(3)
				b.fail = tc.fail
				p := newProbe(time.Second)
				s := batchScheduler(t, b, p.process, SchedulerConfig{Tick: time.Hour, Workers: 4, BatchSize: 64, BatchDelay: time.Hour})
				s.Start()
				time.Sleep(time.Second + time.Millisecond)
				synctest.Wait()
				st := s.Stats()
				_, calls := b.batches()
				if b.recordedCount() != tc.recorded || st.Recorded != int64(tc.recorded) || st.RecordErrors != int64(tc.errors) || calls != 2 || st.Batches != 2 {
					t.Errorf("recorded %d, stats %+v, %d calls; want %d recorded, %d errors, 2 calls", b.recordedCount(), st, calls, tc.recorded, tc.errors)
				}
				b.mu.Lock()
				held := 0
				for _, a := range b.agents {
					if a.owner != "" {
						held++
					}
				}
				b.mu.Unlock()
				if held != tc.errors {
					t.Errorf("%d leases still held, want %d (dropped results keep theirs until they expire)", held, tc.errors)
				}
				if err := s.Shutdown(t.Context()); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
