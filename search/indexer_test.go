package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry"
)

// allIDs pages through everything v may list, checking there are no
// duplicates across pages.
func allIDs(t *testing.T, x *Index, v registry.Scope) []string {
	t.Helper()
	var ids []string
	q := Query{Scope: v, PageSize: 100, Sort: SortName}
	for range 100 {
		r := mustSearch(t, x, q)
		ids = append(ids, hitIDs(r)...)
		if r.NextPageToken == "" {
			break
		}
		q.PageToken = r.NextPageToken
	}
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Fatalf("duplicate ids across pages: %v", ids)
	}
	return ids
}

// docs/threats.md G.72 and F.64 at the index level: a removed agent is
// deleted even when a late event for it arrives after the removal, in the
// same batch or in a later one, because the indexer re-reads current state.
func TestRemovedAgentStaysDeleted(t *testing.T) {
	for _, batch := range []int{1, 1000} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
			src := threeAgents()
			x := openTest(t, src)
			ix := NewIndexer(x, src, IndexerOptions{BatchSize: batch})

			a := testAgent("two", "Agent two", "helps with invoices", skill("s", "Invoices", "reads invoices", "finance"))
			a.Status = registry.StatusRemoved
			src.put(a, registry.ChangeRemoved)
			// The crawler's result lands after the removal (F.64).
			src.event("two", registry.ChangeFetched)
			src.event("two", registry.ChangeChanged)
			if err := ix.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, v := range []registry.Scope{scopeAnonymous, scopeAdmin} {
				if got := allIDs(t, x, v); !slices.Equal(got, []string{"one", "three"}) {
					t.Fatalf("scope %v sees %v", v, got)
				}
			}
			// A purged row (absent from the source) is deleted too.
			src.purge("three")
			src.event("three", registry.ChangeHealth)
			if err := ix.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := allIDs(t, x, scopeAdmin); !slices.Equal(got, []string{"one"}) {
				t.Fatalf("after purge: %v", got)
			}
			if st := x.Status(); st.AppliedSeq != 8 || ix.Lag() != 0 {
				t.Fatalf("applied %d lag %d", st.AppliedSeq, ix.Lag())
			}
		})
	}
}

// The indexer converges to exactly what the source says each viewer may
// see, whatever the interleaving of writes, syncs, restarts and rebuilds.
func TestIndexerConvergesUnderRandomInterleavings(t *testing.T) {
	statuses := []registry.Status{registry.StatusPending, registry.StatusApproved, registry.StatusApproved,
		registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved}
	healths := []registry.Health{registry.HealthOK, registry.HealthOK, registry.HealthUnknown, registry.HealthFailing, registry.HealthGone}
	vis := []registry.Visibility{registry.VisibilityPublic, registry.VisibilityPublic, registry.VisibilityInternal}
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			src := newMemSource()
			dir := t.TempDir()
			x, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = x.Close() }()
			if err := x.Rebuild(t.Context(), src); err != nil {
				t.Fatal(err)
			}
			ix := NewIndexer(x, src, IndexerOptions{BatchSize: 1 + rng.IntN(20)})
			for step := range 250 {
				id := fmt.Sprintf("ag%02d", rng.IntN(40))
				switch op := rng.IntN(12); {
				case op < 6:
					a := testAgent(id, fmt.Sprintf("Agent %d", step), "does things",
						skill("s", "Thing", fmt.Sprintf("does thing %d", rng.IntN(5)), "misc"))
					a.Status = statuses[rng.IntN(len(statuses))]
					a.Health = healths[rng.IntN(len(healths))]
					a.Visibility = vis[rng.IntN(len(vis))]
					src.put(a, registry.ChangeChanged)
				case op < 8:
					src.event(id, registry.ChangeFetched) // late or duplicate event
				case op < 9:
					src.purge(id)
				case op < 11:
					if err := ix.Sync(t.Context()); err != nil {
						t.Fatal(err)
					}
				default:
					if rng.IntN(2) == 0 {
						if err := x.Rebuild(t.Context(), src); err != nil {
							t.Fatal(err)
						}
					} else {
						// Restart: the high-water mark comes back from the index.
						if err := x.Close(); err != nil {
							t.Fatal(err)
						}
						if x, err = Open(dir, Options{}); err != nil {
							t.Fatal(err)
						}
						ix = NewIndexer(x, src, IndexerOptions{BatchSize: 1 + rng.IntN(20)})
					}
				}
			}
			if err := ix.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, v := range []registry.Scope{scopeAnonymous, scopeReader, scopeAdmin} {
				got, want := allIDs(t, x, v), src.visibleIDs(v)
				if len(want) == 0 {
					want = nil
				}
				if !slices.Equal(got, want) {
					t.Fatalf("scope %v:\n got %v\nwant %v", v, got, want)
				}
			}
		})
	}
}

// Rebuild swaps generations while queries run: no query fails and none sees
// an empty or partial index.
func TestRebuildSwapUnderConcurrentQueries(t *testing.T) {
	src := newMemSource()
	for i := range 200 {
		src.put(testAgent(fmt.Sprintf("ag%03d", i), fmt.Sprintf("Agent %d", i), "invoice helper",
			skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	}
	x := openTest(t, src)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	var queries sync.Map
	for w := range 3 {
		wg.Go(func() {
			n := 0
			for {
				select {
				case <-stop:
					queries.Store(w, n)
					return
				default:
				}
				r, err := x.Search(t.Context(), Query{Q: "invoices", PageSize: 5})
				if err == nil && r.TotalSize != 200 {
					err = fmt.Errorf("query saw %d agents", r.TotalSize)
				}
				if err != nil {
					errs <- err
					return
				}
				n++
			}
		})
	}
	for range 2 {
		if err := x.Rebuild(t.Context(), src); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	queries.Range(func(_, v any) bool { total += v.(int); return true })
	if total == 0 {
		t.Fatal("no query ran during the rebuilds")
	}
	if st := x.Status(); st.Generation != "gen-0000000003" {
		t.Fatalf("generation %s after 3 builds", st.Generation)
	}
}

// Run catches up in the background; the test polls Status with a deadline.
func TestRunFollowsSource(t *testing.T) {
	src := threeAgents()
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- NewIndexer(x, src, IndexerOptions{PollInterval: 5 * time.Millisecond}).Run(ctx) }()
	src.put(testAgent("four", "Agent four", "new", skill("s", "New", "new skill", "misc")), registry.ChangeSubmitted)
	deadline := time.Now().Add(20 * time.Second)
	for x.Status().AppliedSeq != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("indexer did not catch up: %+v", x.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	if got := allIDs(t, x, scopeAnonymous); len(got) != 4 {
		t.Fatalf("ids %v", got)
	}
}

// TestIdleSyncDecodesNewSegments: a segment no table knows yet (what a
// background merge introduces between batches) is decoded by the
// indexer's next poll, even with no change to apply, so the next query
// does not pay for it.
func TestIdleSyncDecodesNewSegments(t *testing.T) {
	_, ix, g := syncedThree(t)
	n := knownTables(g)
	if n == 0 {
		t.Fatal("no segment tables after the first sync")
	}
	forgetTables(g)
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := knownTables(g); got != n {
		t.Fatalf("after an idle sync %d segment tables, want %d", got, n)
	}
}

// syncedThree is an index of threeAgents, its indexer synced once, and
// its live generation.
func syncedThree(t *testing.T) (*Index, *Indexer, *generation) {
	t.Helper()
	src := threeAgents()
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{})
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	x.mu.RUnlock()
	return x, ix, g
}

// knownTables is how many segments g has tables of.
func knownTables(g *generation) int {
	g.facets.mu.Lock()
	defer g.facets.mu.Unlock()
	return len(g.facets.segs)
}

// forgetTables drops every table of g, as if each segment were new: the
// next decode reads every segment again.
func forgetTables(g *generation) {
	g.facets.mu.Lock()
	clear(g.facets.segs)
	g.facets.mu.Unlock()
}

// fakePacer counts the units the indexer asked for and says busy or not.
type fakePacer struct {
	busy         bool
	begun, ended int
	onBegin      func() // called as each unit begins, when set
}

func (p *fakePacer) Background(ctx context.Context) (func(), error) {
	p.begun++
	if p.onBegin != nil {
		p.onBegin()
	}
	return func() { p.ended++ }, nil
}

func (p *fakePacer) Busy() bool { return p.busy }

// With a pacer, every batch is one unit of background work, and while
// interactive requests run the batches are short (BusyBatchSize): 450
// changes apply as 200 + 200 + 50, then one more unit finds nothing.
// Quiet, they apply as one batch.
func TestIndexerPacedBatches(t *testing.T) {
	for _, tc := range []struct {
		busy  bool
		units int
	}{{true, 4}, {false, 2}} {
		src := threeAgents()
		x := openTest(t, src)
		for range 150 {
			for _, id := range []string{"one", "two", "three"} {
				src.event(id, registry.ChangeHealth)
			}
		}
		p := &fakePacer{busy: tc.busy}
		ix := NewIndexer(x, src, IndexerOptions{Pace: p})
		// The lag as each unit begins counts down batch by batch.
		var lags []int64
		p.onBegin = func() { lags = append(lags, ix.Lag()) }
		if err := ix.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if p.begun != tc.units || p.ended != tc.units {
			t.Errorf("busy %v: %d units begun, %d ended, want %d", tc.busy, p.begun, p.ended, tc.units)
		}
		if want := map[bool][]int64{true: {0, 250, 50, 0}, false: {0, 0}}[tc.busy]; !slices.Equal(lags, want) {
			t.Errorf("busy %v: lag as each unit began %v, want %v", tc.busy, lags, want)
		}
		if st := x.Status(); st.AppliedSeq != 453 || ix.Lag() != 0 {
			t.Errorf("busy %v: applied %d, lag %d", tc.busy, st.AppliedSeq, ix.Lag())
		}
	}
}

// After rewrites of most agents, their old documents stay deleted in
// the segment built first; once caught up, the indexer merges them away,
// once, and the index answers as before.
func TestIndexerCompactsDeletedDocuments(t *testing.T) {
	src := newMemSource()
	var ids []string
	for i := range 3000 {
		id := fmt.Sprintf("a%04d", i)
		ids = append(ids, id)
		src.put(testAgent(id, "Agent "+id, "helps with invoices", skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	}
	// Bleve's own merges would reclaim a small index's deleted documents
	// at once; at 100,000 agents they stay in the large segments.
	x, err := Open(t.TempDir(), Options{LockTimeout: 200 * time.Millisecond, noMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if err := x.Rebuild(t.Context(), src); err != nil { // one segment of 3,000
		t.Fatal(err)
	}
	// One batch of 1,000 rewrites: two segments, the first a quarter
	// dead (Compact once left two segments alone).
	ix := NewIndexer(x, src, IndexerOptions{BatchSize: 1000})
	x.opts.compactMin = 1 << 40 // no compaction in the first Sync
	for _, id := range ids[:1000] {
		src.event(id, registry.ChangeHealth)
	}
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	x.mu.RUnlock()
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st, err := g.segmentStats(); err != nil || st.Segments != 2 || st.Slots != 4000 {
		t.Fatalf("before compaction %+v (%v), want 2 segments of 4,000 slots", st, err)
	}
	if st, err := x.Segments(); err != nil || st.CompactionDue {
		t.Fatalf("a merge reported due under the limit: %+v (%v)", st, err)
	}
	x.opts.compactMin = 10
	// /metrics says a merge is due once Bleve shows the deletions.
	polltest.Until(t, "the compaction reported due", 10*time.Second, func() bool {
		st, err := x.Segments()
		return err == nil && st.CompactionDue && st.Deleted == 1000
	})
	// Bleve shows a batch's deletions in the large segment once it has
	// introduced the batch, which may follow the round: then the next
	// round compacts.
	polltest.Until(t, "the compaction of 1,000 deleted documents", 10*time.Second, func() bool {
		if err := ix.compactDead(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		return ix.compacted.Load() != 0
	})
	st, err := g.segmentStats()
	dead, slots := st.Deleted, st.Slots
	if err != nil || dead != 0 || slots != 3000 || st.Segments != 1 {
		t.Errorf("after compaction %d segments, %d dead of %d slots (%v), want 1 and 0 of 3000", st.Segments, dead, slots, err)
	}
	if took := ix.compactTook.Load(); took <= 0 {
		t.Errorf("compaction took %d ns", took)
	}
	if got, err := x.Segments(); err != nil || got != (SegmentStats{Segments: 1, Slots: 3000}) {
		t.Errorf("Segments after compaction: %+v (%v)", got, err)
	}
	if got := allIDs(t, x, scopeAdmin); !slices.Equal(got, ids) {
		t.Errorf("after compaction the index lists %v", got)
	}
	// Within compactMinGap (and compactDuty times the last merge) nothing
	// is merged again.
	at := ix.compacted.Load()
	for _, id := range ids[:1500] {
		src.event(id, registry.ChangeHealth)
	}
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ix.compacted.Load() != at {
		t.Error("compacted again within compactMinGap")
	}
}

// The indexer merges an index into one segment when a tenth of its slots
// (and at least deadMin) hold deleted documents, or when it has more than
// maxSegments segments; never a lone segment or an index smaller than
// deadMin.
func TestNeedsCompaction(t *testing.T) {
	for _, tc := range []struct {
		st   SegmentStats
		want bool
	}{
		{SegmentStats{Segments: 48, Slots: 163_035, Deleted: 63_035}, true}, // after an import
		{SegmentStats{Segments: 5, Slots: 110_000, Deleted: 11_000}, true},
		{SegmentStats{Segments: 5, Slots: 110_000, Deleted: 10_999}, false},
		{SegmentStats{Segments: 3, Slots: 20_000, Deleted: 4_999}, false}, // a quarter, but under deadMin
		{SegmentStats{Segments: 25, Slots: 100_000}, true},
		{SegmentStats{Segments: 24, Slots: 100_000}, false},
		{SegmentStats{Segments: 1, Slots: 100_000, Deleted: 60_000}, false}, // Bleve never rewrites a lone segment
		{SegmentStats{Segments: 40, Slots: 4_999, Deleted: 2_000}, false},   // small: Bleve's merges keep it
	} {
		if got := needsCompaction(tc.st, deadMin); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.st, got, tc.want)
		}
	}
}

// While changes keep coming, merges are at least twenty times their own
// duration apart (and a minute); once the index is quiet, a minute.
func TestCompactGap(t *testing.T) {
	for _, tc := range []struct {
		sinceBatch, took, want time.Duration
	}{
		{time.Second, 6 * time.Second, 2 * time.Minute},
		{time.Second, time.Second, time.Minute},
		{29 * time.Second, 30 * time.Second, 10 * time.Minute},
		{30 * time.Second, 30 * time.Second, time.Minute},
		{time.Hour, 0, time.Minute},
	} {
		if got := compactGap(tc.sinceBatch, tc.took); got != tc.want {
			t.Errorf("compactGap(%s, %s) = %s, want %s", tc.sinceBatch, tc.took, got, tc.want)
		}
	}
}
