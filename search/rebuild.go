package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/zapread"
)

// Rebuild builds a complete new generation from src in a new directory and
// swaps it in atomically. The live generation (if any) keeps answering
// queries until the swap; readers never see a half-built index (G.69). The
// new generation starts at the change-log head read before the first page,
// so changes made during the build are applied afterwards by the Indexer
// (re-reading current state makes re-applying them harmless).
func (x *Index) Rebuild(ctx context.Context, src Source) error {
	x.rebuildMu.Lock()
	defer x.rebuildMu.Unlock()
	x.mu.RLock()
	closed := x.closed
	x.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	start := time.Now()
	head, err := src.LatestSeq(ctx)
	if err != nil {
		return fmt.Errorf("search: rebuild: read change-log head: %w", err)
	}
	name, err := x.nextGeneration()
	if err != nil {
		return fmt.Errorf("search: rebuild: %w", err)
	}
	building := filepath.Join(x.dir, name+buildingSufx)
	if err := os.RemoveAll(building); err != nil {
		return fmt.Errorf("search: rebuild: %w", err)
	}
	agents, err := x.build(ctx, building, src, head)
	if err != nil {
		_ = os.RemoveAll(building)
		return fmt.Errorf("search: rebuild: %w", err)
	}
	if err := os.Rename(building, filepath.Join(x.dir, name)); err != nil {
		_ = os.RemoveAll(building)
		return fmt.Errorf("search: rebuild: %w", err)
	}
	if err := syncDir(x.dir); err != nil {
		return fmt.Errorf("search: rebuild: %w", err)
	}
	g, err := x.openGeneration(name)
	if err != nil {
		_ = os.RemoveAll(filepath.Join(x.dir, name))
		return fmt.Errorf("search: rebuild: reopen: %w", err)
	}
	old, err := x.swap(g)
	if err != nil {
		_ = g.close()
		_ = os.RemoveAll(filepath.Join(x.dir, name))
		return err
	}
	if old != nil {
		// No query or write holds old any more: swap took the write lock.
		err = old.close()
	}
	// Deletes the previous generation, or a damaged one that was never
	// opened (G.69).
	x.removeStale()
	x.opts.Logger.Info("search index rebuilt", "generation", name, "agents", agents,
		"applied_seq", head, "duration", time.Since(start).String())
	return err
}

// build writes every searchable agent of src into a new index at path.
// Batches are written by two goroutines: Bleve analyzes a batch and builds
// its segment in the calling goroutine, so this keeps both cores of a small
// server busy. The metadata keys are written last, so an interrupted build
// has no mapping version and is never served.
func (x *Index) build(ctx context.Context, path string, src Source, head int64) (int, error) {
	cfg := bleveConfig(x.opts.LockTimeout)
	// No background merging while building: compact merges everything in
	// one pass at the end, instead of Bleve's tiers rewriting each batch's
	// documents again and again. The option is not persisted; the
	// generation is reopened with the default merge policy.
	cfg["scorchMergePlanOptions"] = zapread.BuildMergePlan()
	idx, err := bleve.NewUsing(path, newMapping(), zapread.IndexType, zapread.IndexType, cfg)
	if err != nil {
		return 0, err
	}
	n, err := fill(ctx, idx, src)
	if err == nil {
		err = zapread.Compact(ctx, idx)
	}
	if err == nil {
		b := idx.NewBatch()
		b.SetInternal(keyMappingVersion, []byte(MappingVersion))
		b.SetInternal(keyAppliedSeq, []byte(strconv.FormatInt(head, 10)))
		err = idx.Batch(b)
	}
	return n, errors.Join(err, idx.Close())
}

const buildWorkers = 2

// fill reads src page by page and indexes the pages in parallel.
func fill(ctx context.Context, idx bleve.Index, src Source) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pages := make(chan []registry.Agent, buildWorkers)
	var wg sync.WaitGroup
	var indexed atomic.Int64
	for range buildWorkers {
		wg.Go(func() {
			for page := range pages {
				b := idx.NewBatch()
				for _, a := range page {
					if err := b.Index(a.ID, NewDocument(a).fields()); err != nil {
						cancel(fmt.Errorf("index agent %s: %w", a.ID, err))
						return
					}
				}
				if err := idx.Batch(b); err != nil {
					cancel(err)
					return
				}
				indexed.Add(int64(len(page)))
			}
		})
	}
	err := readPages(ctx, src, pages)
	close(pages)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && err == nil {
		err = cause
	}
	return int(indexed.Load()), err
}

// readPages sends the searchable agents of src, in pages of ≤ maxBatch.
func readPages(ctx context.Context, src Source, pages chan<- []registry.Agent) error {
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		page, err := src.ListAgents(ctx, after, maxBatch)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		keep := page[:0:0]
		for _, a := range page {
			if a.ID <= after {
				return fmt.Errorf("source listed agent %q after %q: ids must ascend", a.ID, after)
			}
			after = a.ID
			if searchable(a) {
				keep = append(keep, a)
			}
		}
		select {
		case pages <- keep:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// swap makes g the live generation and returns the previous one. It waits
// for running queries and write rounds, and persists CURRENT first so a
// crash right after leaves the new generation live.
func (x *Index) swap(g *generation) (*generation, error) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if err := writeCurrent(x.dir, g.name); err != nil {
		return nil, fmt.Errorf("search: rebuild: write CURRENT: %w", err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	old := x.cur
	x.cur, x.reason = g, nil
	x.epoch.Add(1)
	return old, nil
}
