package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/pace"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
)

func countAs(t *testing.T, idx *search.Index, v registry.Scope) (int, error) {
	t.Helper()
	res, err := idx.Search(t.Context(), search.Query{Scope: v, PageSize: 1})
	if err != nil {
		return 0, err
	}
	return res.TotalSize, nil
}

var fastSearch = searchOptions{poll: 20 * time.Millisecond, maxLag: 1000, maxAge: 10 * time.Second}

// startSearchWith builds a missing index first, then follows the change log;
// Ready says so, Lag and SizeBytes report it, Close releases the directory.
func TestSearchRuntimeLifecycle(t *testing.T) {
	dir := t.TempDir()
	store := registrytest.SQLiteAt(t, dir)
	approved, _ := seedRegistry(t, store, 10)
	svc := registry.NewService(store, registry.ServiceConfig{})
	r, err := startSearchWith(t.Context(), dir, svc, slog.New(slog.DiscardHandler), fastSearch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startSearchWith(t.Context(), dir, svc, nil, defaultSearchOptions); !errors.Is(err, search.ErrLocked) {
		t.Fatalf("second runtime on the same directory: %v, want ErrLocked (G.70)", err)
	}
	polltest.Until(t, "the first build", 10*time.Second, func() bool { return r.Ready(t.Context()) == nil })
	if n, err := countAs(t, r.Index(), registry.ScopeOf(registry.Anonymous)); err != nil || n != len(approved) {
		t.Fatalf("anonymous finds %d (%v), want %d", n, err, len(approved))
	}
	if r.Index().Dir() != filepath.Join(dir, "index") {
		t.Fatalf("index in %s", r.Index().Dir())
	}
	if r.SizeBytes() <= 0 {
		t.Fatalf("SizeBytes %d", r.SizeBytes())
	}

	// Follow: an approval shows up without any call, through the Searcher too.
	admin := registry.Principal{Role: registry.RoleAdmin, Name: "test"}
	one := int64(1)
	pending, err := svc.List(t.Context(), admin, registry.ListQuery{Status: []registry.Status{registry.StatusPending}, PageSize: 1})
	if err != nil || len(pending.Agents) != 1 {
		t.Fatalf("a pending agent: %v %+v", err, pending)
	}
	if _, err := svc.Act(t.Context(), admin, pending.Agents[0].ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: &one}); err != nil {
		t.Fatal(err)
	}
	polltest.Until(t, "the indexer to apply the approval", 10*time.Second, func() bool {
		res, err := r.Searcher().Search(t.Context(), search.Query{Scope: registry.ScopeOf(registry.Anonymous)})
		return err == nil && res.TotalSize == len(approved)+1
	})
	polltest.Until(t, "Lag to reach 0", 10*time.Second, func() bool { return r.Lag() == 0 })

	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := r.Ready(t.Context()); !errors.Is(err, search.ErrClosed) {
		t.Fatalf("Ready after Close: %v", err)
	}
	if _, err := countAs(t, r.Index(), registry.ScopeOf(registry.Principal{Role: registry.RoleAdmin})); !errors.Is(err, search.ErrClosed) {
		t.Fatalf("query after Close: %v", err)
	}
	// The directory is free again, and the index opens ready (no rebuild).
	r2, err := startSearchWith(t.Context(), dir, svc, nil, fastSearch)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if st := r2.Index().Status(); !st.Ready {
		t.Fatalf("reopened index not ready: %v", st.Reason)
	}
}

// Ready explains why the index is not fit to serve: behind by too many
// changes, or a change waiting too long.
func TestSearchRuntimeReadyLag(t *testing.T) {
	dir := t.TempDir()
	store := registrytest.SQLiteAt(t, dir)
	svc := registry.NewService(store, registry.ServiceConfig{})
	// The indexer builds once, then waits an hour: changes stay unapplied.
	r, err := startSearchWith(t.Context(), dir, svc, nil, searchOptions{poll: time.Hour, maxLag: 2, maxAge: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	polltest.Until(t, "the first build", 10*time.Second, func() bool { return r.Ready(t.Context()) == nil })
	for _, host := range []string{"a", "b"} {
		if _, err := svc.Submit(t.Context(), registry.Anonymous, "https://"+host+".example.com/", registry.VisibilityPublic); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Ready(t.Context()); err != nil {
		t.Fatalf("2 changes behind, within bounds: %v", err)
	}
	r.now = func() time.Time { return time.Now().Add(time.Minute) }
	if err := r.Ready(t.Context()); !errors.Is(err, errSearchLagging) || !strings.Contains(err.Error(), "oldest change not applied") {
		t.Fatalf("a change waiting a minute: %v", err)
	}
	r.now = time.Now
	if _, err := svc.Submit(t.Context(), registry.Anonymous, "https://c.example.com/", registry.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	if err := r.Ready(t.Context()); !errors.Is(err, errSearchLagging) || !strings.Contains(err.Error(), "3 changes behind") {
		t.Fatalf("3 changes behind: %v", err)
	}
	// Behind while queries are served first: ready as long as the
	// indexer moved within maxAge; not once it stalls, nor when the gate
	// is quiet again.
	g := pace.New(pace.Options{})
	r.opts.pace = g
	end := g.Begin()
	if err := r.Ready(t.Context()); !errors.Is(err, errSearchLagging) {
		t.Fatalf("3 behind while busy, the indexer not moved since it started: %v", err)
	}
	if err := r.ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"d", "e", "f"} {
		if _, err := svc.Submit(t.Context(), registry.Anonymous, "https://"+host+".example.com/", registry.VisibilityPublic); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Ready(t.Context()); err != nil {
		t.Fatalf("3 behind while busy, the indexer moved just now: %v", err)
	}
	r.now = func() time.Time { return time.Now().Add(time.Minute) }
	if err := r.Ready(t.Context()); !errors.Is(err, errSearchLagging) {
		t.Fatalf("busy, the indexer still a minute later: %v", err)
	}
	r.now = time.Now
	end()
	polltest.Until(t, "the gate to turn quiet", 10*time.Second, func() bool { return !g.Busy() })
	if err := r.Ready(t.Context()); !errors.Is(err, errSearchLagging) {
		t.Fatalf("3 behind, quiet: %v", err)
	}
	// Reindex applies everything, so the index is current again.
	if err := r.Reindex(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r.Ready(t.Context()); err != nil {
		t.Fatalf("after Reindex: %v", err)
	}
	if n, err := countAs(t, r.Index(), registry.ScopeOf(registry.Principal{Role: registry.RoleAdmin})); err != nil || n != 6 {
		t.Fatalf("admin finds %d (%v), want 6", n, err)
	}
}

// Reindex builds a new generation and swaps it in while queries keep being
// answered by the old one: no query fails or sees a partial index (G.69).
func TestSearchRuntimeReindexUnderQueries(t *testing.T) {
	dir := t.TempDir()
	store := registrytest.SQLiteAt(t, dir)
	approved, _ := seedRegistry(t, store, 60)
	svc := registry.NewService(store, registry.ServiceConfig{})
	r, err := startSearchWith(t.Context(), dir, svc, nil, fastSearch)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	polltest.Until(t, "the first build", 10*time.Second, func() bool { return r.Ready(t.Context()) == nil })
	gen := r.Index().Status().Generation

	ctx, stop := context.WithCancel(t.Context())
	var queries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				res, err := r.Searcher().Search(ctx, search.Query{Q: "weather", Scope: registry.ScopeOf(registry.Anonymous)})
				if err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
				if err == nil && res.TotalSize != len(approved) {
					errs <- errors.New("a query saw a partial index")
					return
				}
				queries.Add(1)
			}
		})
	}
	for range 2 {
		if err := r.Reindex(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if now := r.Index().Status().Generation; now == gen {
		t.Fatalf("generation %s not replaced", now)
	}
	if queries.Load() == 0 {
		t.Fatal("no query ran during the rebuilds")
	}
	// A canceled Reindex fails and leaves the live generation serving.
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.Reindex(canceled); err == nil {
		t.Fatal("a canceled Reindex succeeded")
	}
	if n, err := countAs(t, r.Index(), registry.ScopeOf(registry.Anonymous)); err != nil || n != len(approved) {
		t.Fatalf("after a canceled Reindex: %d, %v", n, err)
	}
}

// The indexer stops with the context startSearchWith was given; Ready says so.
func TestSearchRuntimeStopsWithContext(t *testing.T) {
	dir := t.TempDir()
	store := registrytest.SQLiteAt(t, dir)
	svc := registry.NewService(store, registry.ServiceConfig{})
	ctx, cancel := context.WithCancel(t.Context())
	r, err := startSearchWith(ctx, dir, svc, nil, fastSearch)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	polltest.Until(t, "the first build", 10*time.Second, func() bool { return r.Ready(t.Context()) == nil })
	cancel()
	polltest.Until(t, "the indexer to stop", 10*time.Second, func() bool { return errors.Is(r.Ready(t.Context()), search.ErrClosed) })
}
