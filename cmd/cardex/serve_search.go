package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/cardexhq/cardex/api"
	"github.com/cardexhq/cardex/pace"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// searchOptions tune the runtime; serve uses defaultSearchOptions,
// tests shorten them.
type searchOptions struct {
	// poll is how often the indexer looks for new changes: a change is
	// searchable within about this long.
	poll time.Duration
	// Readiness bounds (docs/design.md: the index is derived data following the
	// change log; a replica far behind it would answer stale searches, so
	// /readyz takes it out of rotation): changes behind, and the age of the
	// oldest change not yet applied.
	maxLag int64
	maxAge time.Duration
	// synonyms are groups added to search.DefaultSynonyms
	// (--search-synonyms).
	synonyms [][]string
	// pace lets the indexer's batches wait while queries run (nil: never).
	pace *pace.Gate
}

var defaultSearchOptions = searchOptions{poll: 2 * time.Second, maxLag: 1000, maxAge: 10 * time.Second}

// errSearchLagging is Ready's answer when the index is built but behind.
var errSearchLagging = errors.New("search index is behind the change log")

// searchRuntime is the serve-side search: the index and the indexer that
// keeps it in step with the registry's change log.
type searchRuntime struct {
	idx    *search.Index
	ix     *search.Indexer
	src    registry.IndexSource
	log    *slog.Logger
	runCtx context.Context // ends when the runtime closes
	cancel context.CancelFunc
	done   chan struct{} // closed when the indexer goroutine returns
	now    func() time.Time
	opts   searchOptions

	closeOnce sync.Once
	closeErr  error
}

// startSearchWith opens (or creates) the index in filepath.Join(dataDir,
// "index"), starts the indexer (which rebuilds first if the index is
// missing, corrupt or of an old mapping, then follows the change log) and
// returns at once; queries answer search.ErrNotReady until the first build
// is done.
//
// The index is per process even with PostgreSQL: --data is then where each
// replica keeps its own index, built from and following the shared database
// (it is derived data, docs/design.md principle 2). It fails with
// search.ErrLocked when another process holds that directory (docs/threats.md
// G.70). The indexer stops when ctx ends or at Close. opts tune it
// (defaultSearchOptions, shortened by tests).
func startSearchWith(ctx context.Context, dataDir string, svc *registry.Service, log *slog.Logger, opts searchOptions) (*searchRuntime, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	idx, err := search.Open(filepath.Join(dataDir, "index"), search.Options{Logger: log, Synonyms: opts.synonyms, MaxRunning: searchCores})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	r := &searchRuntime{
		idx:    idx,
		ix:     search.NewIndexer(idx, svc.IndexSource(), search.IndexerOptions{PollInterval: opts.poll, Pace: pacer(opts.pace)}),
		src:    svc.IndexSource(),
		log:    log,
		runCtx: runCtx,
		cancel: cancel,
		done:   make(chan struct{}),
		now:    time.Now,
		opts:   opts,
	}
	go func() {
		defer close(r.done)
		err := r.ix.Run(runCtx)
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, search.ErrClosed) {
			log.Error("search indexer stopped", "err", err.Error())
		}
	}()
	return r, nil
}

// pacer is g as the indexer's Pacer; none without a gate.
func pacer(g *pace.Gate) search.Pacer {
	if g == nil {
		return nil
	}
	return g.Index()
}

// Index is the index, for web.Config.Index.
func (r *searchRuntime) Index() *search.Index { return r.idx }

// Searcher is the index as the API queries it, for api.Config.Search.
func (r *searchRuntime) Searcher() api.Searcher { return r.idx }

// Reindex rebuilds the index into a new generation and swaps it in; the old
// generation keeps answering queries until then. It then applies the
// changes made during the build, so a query right after sees them. It
// stops early when ctx ends or the runtime closes.
func (r *searchRuntime) Reindex(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.runCtx, cancel)
	defer stop()
	start := r.now()
	if err := r.idx.Rebuild(ctx, r.src); err != nil {
		return err
	}
	if err := r.ix.Sync(ctx); err != nil {
		return err
	}
	r.log.Info("search index rebuilt on request", "duration", r.now().Sub(start).String())
	return nil
}

// Ready is nil when the index is built and within 1,000 changes and 10 s
// of the change log; otherwise an error saying why, for /readyz. The age
// compares this host's clock with the change's timestamp, written by
// whichever replica made it; 10 s absorbs ordinary clock skew.
func (r *searchRuntime) Ready(ctx context.Context) error {
	select {
	case <-r.done:
		return fmt.Errorf("%w: the indexer has stopped", search.ErrClosed)
	default:
	}
	st := r.idx.Status()
	if !st.Ready {
		if st.Reason == nil {
			return search.ErrNotReady
		}
		return fmt.Errorf("%w: %w", search.ErrNotReady, st.Reason)
	}
	pending, _, err := r.src.Changes(ctx, st.AppliedSeq, 1)
	if err != nil {
		return fmt.Errorf("search readiness: read change log: %w", err)
	}
	if len(pending) == 0 {
		return nil
	}
	head, err := r.src.LatestSeq(ctx)
	if err != nil {
		return fmt.Errorf("search readiness: read change log: %w", err)
	}
	var lagging error
	if lag := head - st.AppliedSeq; lag > r.opts.maxLag {
		lagging = fmt.Errorf("%w: %d changes behind (at most %d)", errSearchLagging, lag, r.opts.maxLag)
	} else if age := r.now().Sub(pending[0].At); age > r.opts.maxAge {
		lagging = fmt.Errorf("%w: the oldest change not applied is %s old (at most %s)",
			errSearchLagging, age.Round(time.Second), r.opts.maxAge)
	}
	// Behind because queries and writes come first (package pace): the
	// indexer is applying batches in its share of the time, so the replica
	// keeps answering rather than leave the rotation and stop serving the
	// very requests that slowed it. A stalled indexer is not excused.
	if lagging != nil && r.opts.pace.Index().Yielding() && r.now().Sub(r.ix.LastBatch()) < r.opts.maxAge {
		return nil
	}
	return lagging
}

// Lag is how many changes the index was behind after the indexer's last
// batch, for /metrics.
func (r *searchRuntime) Lag() int64 { return r.ix.Lag() }

// SizeBytes is the index's size on disk (every generation, including one
// being built), for /metrics. Files vanishing during the walk (a swap
// deleting the old generation) are skipped.
func (r *searchRuntime) SizeBytes() int64 {
	var n int64
	_ = filepath.WalkDir(r.idx.Dir(), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// Close stops the indexer, waits for it, and closes the index (releasing
// its directory lock). It is safe to call more than once.
func (r *searchRuntime) Close() error {
	r.closeOnce.Do(func() {
		r.cancel()
		<-r.done
		r.closeErr = r.idx.Close()
	})
	return r.closeErr
}
