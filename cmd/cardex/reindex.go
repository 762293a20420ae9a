package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// reindexCmd is `cardex reindex [--data DIR] [--database-url URL]`: rebuild
// the search index of a stopped deployment from SQL (docs/configuration.md). The
// index lives in DIR/index whatever the database (with PostgreSQL each
// replica keeps its own). While a server holds the index it refuses and
// points at POST /api/v1/admin/reindex (docs/threats.md G.70).
type reindexCmd struct {
	// progressEvery is how often a progress line is printed on stderr;
	// zero means every second.
	progressEvery time.Duration
}

func (rc *reindexCmd) run(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("cardex reindex", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var sf storeFlags
	sf.register(fs, e.getenv)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cardex reindex [--data DIR] [--database-url URL]")
		fmt.Fprintln(fs.Output(), "Rebuilds the search index in DIR/index from the database; the server must be stopped")
		fmt.Fprintln(fs.Output(), "(on a running server use POST /api/v1/admin/reindex).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "cardex reindex: takes no arguments")
		fs.Usage()
		return exitUsage
	}
	if err := sf.validate(); err != nil {
		fmt.Fprintln(e.stderr, "cardex reindex:", err)
		fs.Usage()
		return exitUsage
	}
	// The store first, without creating one: a --data that holds no
	// database is a mistake to report, not an empty index to build.
	store, err := sf.openExisting(ctx, nil)
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex reindex:", err)
		return storeExitCode(err)
	}
	defer store.Close()
	dir := filepath.Join(sf.data, "index")
	// Then the index: refusing costs nothing when a server holds it.
	idx, err := search.Open(dir, search.Options{})
	if errors.Is(err, search.ErrLocked) {
		fmt.Fprintf(e.stderr, "cardex reindex: the index in %s is in use by another process (a running cardex serve?).\n"+
			"Stop the server first, or rebuild it while it runs with POST /api/v1/admin/reindex (admin token).\n", dir)
		return exitFail
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex reindex:", err)
		return exitFail
	}
	defer func() {
		if err := idx.Close(); err != nil {
			fmt.Fprintln(e.stderr, "cardex reindex: closing the index:", err)
		}
	}()
	svc := registry.NewService(store, registry.ServiceConfig{})
	total, err := svc.List(ctx, registry.Principal{Role: registry.RoleAdmin}, registry.ListQuery{PageSize: 1})
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex reindex: counting agents:", err)
		return exitFail
	}
	src := &countingSource{Source: svc.IndexSource()}
	start := time.Now()
	stop := rc.progress(e.stderr, src, total.TotalSize, start)
	err = idx.Rebuild(ctx, src)
	stop()
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex reindex:", err)
		return exitFail
	}
	d := time.Since(start)
	fmt.Fprintf(e.stdout, "reindexed %d agents (%d searchable; removed agents are not indexed) in %s\n",
		src.read.Load(), src.searchable.Load(), d.Round(time.Millisecond))
	return exitOK
}

// progress prints "read/total agents, rate" every progressEvery until the
// returned stop is called, which prints the last line. Plain lines, not a
// terminal animation, so logs of a batch job read well.
func (rc *reindexCmd) progress(w io.Writer, src *countingSource, total int, start time.Time) (stop func()) {
	line := func() {
		n := src.read.Load()
		rate := float64(n) / max(time.Since(start).Seconds(), 1e-3)
		fmt.Fprintf(w, "reindex: %d/%d agents read (%.0f/s)\n", n, total, rate)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		every := rc.progressEvery
		if every <= 0 {
			every = time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				line()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		line()
	}
}

// countingSource counts the agents a rebuild reads, for the progress line.
type countingSource struct {
	search.Source
	read, searchable atomic.Int64
}

func (c *countingSource) ListAgents(ctx context.Context, afterID string, limit int) ([]registry.Agent, error) {
	agents, err := c.Source.ListAgents(ctx, afterID, limit)
	c.read.Add(int64(len(agents)))
	for _, a := range agents {
		if a.Status != registry.StatusRemoved {
			c.searchable.Add(1)
		}
	}
	return agents, err
}
