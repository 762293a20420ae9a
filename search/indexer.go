package search

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/zapread"
)

// IndexerOptions configure an Indexer. The zero value is usable.
type IndexerOptions struct {
	// PollInterval is how often Run looks for new changes. Default 2s.
	PollInterval time.Duration
	// BatchSize is how many change-log entries one round reads (≤ 1,000).
	BatchSize int
	// MaxBackoff caps the wait after failed rounds. Default 1 minute.
	MaxBackoff time.Duration
	// Pace, when set, is asked before each batch and told when it is done:
	// while interactive requests run, batches wait their turn
	// (pace.Gate.Background) so queries keep the cores. BusyBatchSize is
	// the batch read while Busy says so (default 200): shorter units keep
	// a query from running beside a long one.
	Pace          Pacer
	BusyBatchSize int
}

// Pacer is what the indexer needs of the process's pace.Gate.
type Pacer interface {
	Background(ctx context.Context) (done func(), err error)
	Busy() bool
}

// Indexer keeps an Index in step with a Source's change log. The
// high-water mark lives inside the index (written in the same Bleve batch as
// the documents), so a restart resumes exactly where the index is, and a
// rebuilt generation carries its own.
type Indexer struct {
	idx  *Index
	src  Source
	opts IndexerOptions
	lag  atomic.Int64
	last atomic.Int64 // unix nanoseconds the last batch of changes was applied
	// compacted is when the indexer last merged its segments into one
	// (unix nanoseconds; compactDead), compactTook how long that took.
	compacted   atomic.Int64
	compactTook atomic.Int64
}

// Compaction: every change rewrites an agent's document, and the old one
// stays in its segment, marked deleted, until Bleve merges that segment —
// and Bleve's tiered merges leave the largest segment alone while a few
// small ones sit beside it. After a large import each agent had been
// written four times or more (submitted, crawled, approved, first probe):
// the index of 100,000 agents held 48 segments and 163,000 slots, 63,000
// of them deleted, and a unique query cost 3.7 CPU-ms against 1.7 on the
// same agents merged into one segment, whose tables also took 160 MiB less
// (docs/benchmarks.md "Under real load"). Every query walks all slots of
// all segments. So once the indexer has caught up it merges the segments
// into one when at least deadShare of the slots (and deadMin of them) are
// dead, or the segments are more than maxSegments. A merge of 100,000
// agents costs about 6 CPU-s, so while changes keep coming the next one
// waits at least compactDuty times as long as the last took (and
// compactMinGap): merging stays under one twentieth of a core however
// large the catalogue. Once no change has come for compactQuiet (a probe
// round or an import is over), one merge leaves the index as a rebuild
// would, after compactMinGap.
const (
	deadShare     = 0.10
	deadMin       = 5_000
	maxSegments   = 24
	compactMinGap = time.Minute
	compactDuty   = 20
	compactQuiet  = 30 * time.Second
)

// NewIndexer returns an indexer of idx following src.
func NewIndexer(idx *Index, src Source, opts IndexerOptions) *Indexer {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.BatchSize <= 0 || opts.BatchSize > maxBatch {
		opts.BatchSize = maxBatch
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	if opts.BusyBatchSize <= 0 || opts.BusyBatchSize > opts.BatchSize {
		opts.BusyBatchSize = min(200, opts.BatchSize)
	}
	return &Indexer{idx: idx, src: src, opts: opts}
}

// Lag is how many change-log entries the index was behind after the last
// batch it applied (for metrics).
func (ix *Indexer) Lag() int64 { return ix.lag.Load() }

// LastBatch is when the indexer last applied a batch of changes (zero:
// never since it started): a lagging index that moved recently is
// catching up, not stalled.
func (ix *Indexer) LastBatch() time.Time {
	if n := ix.last.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Run rebuilds the index first if it needs it, then applies new changes
// every PollInterval until ctx ends. A failing rebuild or round is retried
// with exponential back-off, never in a hot loop (G.69). It returns
// ctx.Err() or ErrClosed.
func (ix *Indexer) Run(ctx context.Context) error {
	wait := ix.opts.PollInterval
	for {
		err := ix.round(ctx)
		switch {
		case errors.Is(err, ErrClosed):
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			ix.idx.opts.Logger.Error("search indexer", "err", err.Error(), "retry_in", wait.String())
			wait = min(wait*2, ix.opts.MaxBackoff)
		default:
			wait = ix.opts.PollInterval
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (ix *Indexer) round(ctx context.Context) error {
	if need, _ := ix.idx.NeedsRebuild(); need {
		if err := ix.idx.Rebuild(ctx, ix.src); err != nil {
			return err
		}
	}
	return ix.Sync(ctx)
}

// releaseAfterDocs: once the indexer has built tables for segments
// holding this many documents (a merge of large segments), it also gives
// back the heap the build used, as opening a generation does
// (generation.afterBuild).
const releaseAfterDocs = 10_000

// Sync applies every change available now and returns when the index has
// caught up with the source (or on the first error, leaving the index at
// the last fully applied batch). It returns ErrNotReady when the index needs
// a rebuild first. Lag is brought up to date after every batch: while a
// large backlog is applied (minutes, after a bulk approval under queries)
// it counts down instead of showing the last round's zero.
func (ix *Indexer) Sync(ctx context.Context) error {
	for {
		done, err := ix.paced(ctx)
		if err != nil {
			return err
		}
		head, err := ix.src.LatestSeq(ctx)
		if err != nil {
			return fmt.Errorf("search: indexer: %w", err)
		}
		if st := ix.idx.Status(); st.Ready {
			ix.lag.Store(max(0, head-st.AppliedSeq))
		}
		if done {
			return nil
		}
	}
}

// paced applies one batch once the pacer lets it (a whole batch when no
// pacer is set or it is not busy, BusyBatchSize when it is).
func (ix *Indexer) paced(ctx context.Context) (bool, error) {
	if ix.opts.Pace == nil {
		return ix.step(ctx, ix.opts.BatchSize, false)
	}
	release, err := ix.opts.Pace.Background(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	n, busy := ix.opts.BatchSize, ix.opts.Pace.Busy()
	if busy {
		n = ix.opts.BusyBatchSize
	}
	return ix.step(ctx, n, busy)
}

// step applies one batch of at most n changes. queries says queries are
// running now: see the decoding of segments below. For every changed agent it re-reads
// the current state, so the order of events does not matter: a late
// "fetched" after "removed" finds the agent removed and deletes it
// (docs/threats.md F.64, G.72).
func (ix *Indexer) step(ctx context.Context, n int, queries bool) (done bool, err error) {
	x := ix.idx
	// writeMu keeps g live for the whole round: swap and Close take it
	// too. The read lock is not held across the source's SQL reads, so a
	// waiting swap never stalls queries behind them.
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	g, err := x.acquire()
	if err != nil {
		return false, err
	}
	x.mu.RUnlock()

	applied := g.applied.Load()
	changes, next, err := ix.src.Changes(ctx, applied, n)
	if err != nil {
		return false, fmt.Errorf("search: indexer: read changes after %d: %w", applied, err)
	}
	if len(changes) == 0 {
		// Nothing to apply: decode the segments a background merge
		// introduced since the last batch here, at the poll, rather than
		// in the next query, which would pay for the whole merged segment
		// (docs/benchmarks.md "Cost of anonymous requests"). Nothing new
		// costs a look at the snapshot's segment list.
		if err := ix.compactDead(ctx, g); err != nil {
			return false, err
		}
		return true, ix.decode(g)
	}
	if next <= applied {
		return false, fmt.Errorf("search: indexer: source did not advance past %d", applied)
	}
	ids := make([]string, 0, len(changes))
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if !seen[c.AgentID] {
			seen[c.AgentID] = true
			ids = append(ids, c.AgentID)
		}
	}
	agents, err := ix.src.Agents(ctx, ids)
	if err != nil {
		return false, fmt.Errorf("search: indexer: read agents: %w", err)
	}
	current := make(map[string]registry.Agent, len(agents))
	for _, a := range agents {
		current[a.ID] = a
	}
	b := g.idx.NewBatch()
	for _, id := range ids {
		a, ok := current[id]
		if !ok || !searchable(a) {
			b.Delete(id)
			continue
		}
		if err := b.Index(id, NewDocument(a).fields()); err != nil {
			return false, fmt.Errorf("search: indexer: agent %s: %w", id, err)
		}
	}
	b.SetInternal(keyAppliedSeq, []byte(strconv.FormatInt(next, 10)))
	if err := g.idx.Batch(b); err != nil {
		return false, fmt.Errorf("search: indexer: write batch: %w", err)
	}
	g.applied.Store(next)
	ix.last.Store(time.Now().UnixNano())
	// Decode the new segment's text and facets here rather than in the
	// next query (and any segment a merge has introduced since) — unless
	// the batch was full, so more changes are waiting, and no query runs
	// to need them: while a large backlog is applied, merges keep
	// replacing segments, and decoding each merged one only for the next
	// merge to replace it was a third of the indexer's time during a bulk
	// import (docs/benchmarks.md "Under real load"). The round's last
	// step, with nothing left to apply, decodes whatever is live then.
	//
	// Not decoded now, the batch is not searched yet: queries keep reading
	// the last decoded snapshot (pin.go) until a step decodes, the next one
	// once a query has come. A query that read the newest snapshot instead
	// decoded every segment the backlog's merges had made, about 100,000
	// documents' worth at the end of an import: seconds, past its timeout.
	// An index the tables cannot read has no pin: queries read each batch
	// at once, so decode (which finds nothing to build) moves the epoch.
	if queries || len(changes) < n || !g.readers.Pinned() {
		return false, ix.decode(g)
	}
	return false, nil
}

// decode builds the tables of the segments of g's newest snapshot and
// pins it for queries (facetTables.warm). When the snapshot queries read
// now holds batches the one before did not, the epoch moves on, after the
// pin: a query that read the old epoch and ran on the new data only
// caches fresher values under a key nobody asks for once the epoch has
// moved, and no answer cached from the older snapshot is served again.
// An index the tables cannot read is searched at its newest snapshot.
func (ix *Indexer) decode(g *generation) error {
	applied := g.applied.Load()
	built, pinned, err := g.facets.warm(g)
	if err != nil {
		return fmt.Errorf("search: indexer: %w", err)
	}
	g.afterBuild(built)
	if !pinned {
		g.readers.Unpin()
	}
	if g.shown.Swap(applied) != applied {
		ix.idx.epoch.Add(1)
	}
	return nil
}

// compactDead merges g's segments into one when enough of their slots
// hold deleted documents or they are too many (see deadShare).
func (ix *Indexer) compactDead(ctx context.Context, g *generation) error {
	if last := ix.compacted.Load(); last != 0 {
		gap := compactGap(time.Since(ix.LastBatch()), time.Duration(ix.compactTook.Load()))
		if time.Since(time.Unix(0, last)) < gap {
			return nil
		}
	}
	st, err := g.segmentStats()
	if err != nil {
		return fmt.Errorf("search: indexer: %w", err)
	}
	if !needsCompaction(st, ix.idx.opts.compactMin) {
		return nil
	}
	start := time.Now()
	ix.compacted.Store(start.UnixNano())
	if err := zapread.Compact(ctx, g.idx); err != nil {
		return fmt.Errorf("search: indexer: %w", err)
	}
	took := time.Since(start)
	ix.compactTook.Store(int64(took))
	ix.idx.opts.Logger.Info("search index compacted", "segments", st.Segments, "deleted_documents", st.Deleted,
		"slots", st.Slots, "duration", took.Round(time.Millisecond).String())
	return nil
}

// compactGap is the least time between two merges into one segment when
// the last batch of changes was applied sinceBatch ago and the last merge
// took took.
func compactGap(sinceBatch, took time.Duration) time.Duration {
	if sinceBatch >= compactQuiet {
		return compactMinGap
	}
	return max(compactMinGap, compactDuty*took)
}

// needsCompaction says whether segments like st are worth merging into
// one: enough deleted slots, or too many segments in an index of at least
// deadMin slots (a smaller one is Bleve's merges' to keep).
func needsCompaction(st SegmentStats, deadMin uint64) bool {
	if st.Segments <= 1 || st.Slots < deadMin {
		return false
	}
	return st.Segments > maxSegments || (st.Deleted >= deadMin && float64(st.Deleted) >= deadShare*float64(st.Slots))
}
