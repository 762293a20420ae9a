package search

import (
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/zapread"
)

// A merge's new segment is decoded by the indexer, not by the queries
// that meet it: until the indexer has decoded it, queries read the
// snapshot before the merge, which holds the same agents.
func TestQueriesReadTheDecodedSnapshot(t *testing.T) {
	src := threeAgents()
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{})
	src.put(testAgent("four", "Agent four", "helps with invoices", skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	if err := ix.Sync(t.Context()); err != nil { // a second segment
		t.Fatal(err)
	}
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	x.mu.RUnlock()
	if n := len(newestSegments(t, g)); n < 2 {
		t.Fatalf("%d segments before the merge, want several", n)
	}
	if r := mustSearch(t, x, Query{Q: "invoices", Scope: scopeAdmin}); r.TotalSize != 4 {
		t.Fatalf("before the merge: %d agents, want 4", r.TotalSize)
	}
	// A merge into one segment, as the indexer's compaction or Bleve's
	// own merges introduce one, with no decode after it.
	if err := zapread.Compact(t.Context(), g.idx); err != nil {
		t.Fatal(err)
	}
	merged := newestSegments(t, g)
	if len(merged) != 1 {
		t.Fatalf("after the merge %d segments, want 1", len(merged))
	}
	decoded := func() bool {
		g.facets.mu.Lock()
		defer g.facets.mu.Unlock()
		_, ok := g.facets.segs[merged[0]]
		return ok
	}
	// Another query than before: the result cache does not answer it.
	after := mustSearch(t, x, Query{Q: "helps invoices", Scope: scopeAdmin})
	if decoded() {
		t.Fatal("a query decoded the merged segment")
	}
	if after.TotalSize != 4 || len(after.Hits) != 4 {
		t.Fatalf("during the merge: %d agents, %d hits; want 4, 4", after.TotalSize, len(after.Hits))
	}
	// The indexer's next poll decodes it and queries move on to it.
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !decoded() {
		t.Fatal("the indexer's poll did not decode the merged segment")
	}
	if r := mustSearch(t, x, Query{Q: "reads invoices", Scope: scopeAdmin}); r.TotalSize != 4 {
		t.Fatalf("after the decode: %d agents, want 4", r.TotalSize)
	}
	// The merged-away segments keep their tables until the decode after
	// the one that pinned the merge (a query may still read them), then
	// lose them.
	if n := knownTables(g); n < 3 {
		t.Fatalf("right after the pin %d segment tables, want the merged one and the two before", n)
	}
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := knownTables(g); n != 1 || !decoded() {
		t.Fatalf("a decode later %d segment tables, want only the merged one", n)
	}
}

// A batch the indexer applies without decoding (a backlog, no query
// running) is not searched until a step decodes it: queries keep reading
// the last decoded snapshot and decode nothing themselves (at the end of
// an import that was every segment the backlog's merges had made, seconds
// of a query's time), and the indexer's next step once a query has come
// decodes and pins the newest snapshot. No answer cached from the older
// snapshot is served after that.
func TestUndecodedBatchWaitsForTheDecode(t *testing.T) {
	src := threeAgents()
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{})
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	const q = "reads invoices"
	if r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin}); r.TotalSize != 3 {
		t.Fatalf("before the batches: %d agents, want 3", r.TotalSize)
	}
	for _, id := range []string{"four", "five"} {
		src.put(testAgent(id, "Agent "+id, "helps with invoices", skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	}
	// One change of the two: a full batch, more waiting, no query
	// running, so the step does not decode.
	if _, err := ix.step(t.Context(), 1, false); err != nil {
		t.Fatal(err)
	}
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	x.mu.RUnlock()
	undecoded := func() int {
		g.facets.mu.Lock()
		defer g.facets.mu.Unlock()
		n := 0
		for _, s := range newestSegments(t, g) {
			if _, ok := g.facets.segs[s]; !ok {
				n++
			}
		}
		return n
	}
	if n := undecoded(); n != 1 {
		t.Fatalf("%d undecoded segments after the batch, want its own", n)
	}
	if r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin}); r.TotalSize != 3 {
		t.Fatalf("after one undecoded batch: %d agents, want the 3 of the decoded snapshot", r.TotalSize)
	}
	if n := undecoded(); n != 1 {
		t.Fatal("a query decoded the batch's segment")
	}
	if got, want := x.Status().AppliedSeq, g.shown.Load(); got <= want {
		t.Fatalf("applied %d, shown %d: want the batch applied and not shown", got, want)
	}
	// A query has come: the next step decodes, and the same query (the
	// answer of 3 is cached) now finds both batches.
	if _, err := ix.step(t.Context(), 1, true); err != nil {
		t.Fatal(err)
	}
	if n := undecoded(); n != 0 {
		t.Fatalf("%d undecoded segments after a step with queries, want 0", n)
	}
	if r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin}); r.TotalSize != 5 {
		t.Fatalf("after the decode: %d agents, want 5", r.TotalSize)
	}
	if got, want := g.shown.Load(), x.Status().AppliedSeq; got != want {
		t.Fatalf("shown %d, applied %d: want the same", got, want)
	}
}

// newestSegments are the segments of g's newest snapshot.
func newestSegments(t *testing.T, g *generation) []zapread.Segment {
	t.Helper()
	r, done, err := g.readers.Newest()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	snap, ok := zapread.SnapshotOf(r)
	if !ok {
		t.Fatal("not a scorch snapshot")
	}
	var out []zapread.Segment
	for _, ss := range snap.Segments() {
		out = append(out, ss.Segment())
	}
	return out
}

// The epoch moves when what queries read gains batches, and only then:
// an idle poll leaves the cache alone, and an index the tables cannot
// read (no pin: queries read Bleve's newest snapshot) has each batch
// searched at once, its earlier answers no longer served.
func TestEpochMovesWithWhatQueriesRead(t *testing.T) {
	src := threeAgents()
	segmentSupported = func(zapread.Segment) bool { return false }
	t.Cleanup(func() { segmentSupported = zapread.Segment.Supported })
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{})
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if x.cur.readers.Pinned() {
		t.Fatal("an index the tables cannot read is pinned")
	}
	const q = "reads invoices"
	if r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin}); r.TotalSize != 3 {
		t.Fatalf("before the batches: %d agents, want 3", r.TotalSize)
	}
	epoch := x.epoch.Load()
	if done, err := ix.step(t.Context(), 1, false); err != nil || !done {
		t.Fatalf("idle step: done %v, %v", done, err)
	}
	if got := x.epoch.Load(); got != epoch {
		t.Fatalf("an idle poll moved the epoch %d → %d", epoch, got)
	}
	for _, id := range []string{"four", "five"} {
		src.put(testAgent(id, "Agent "+id, "helps with invoices", skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	}
	// A full batch, more waiting, no query running: with no pin it is
	// searched at once, and the cached answer of 3 is not served.
	if _, err := ix.step(t.Context(), 1, false); err != nil {
		t.Fatal(err)
	}
	if r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin}); r.TotalSize != 4 {
		t.Fatalf("after one batch: %d agents, want 4", r.TotalSize)
	}
}
