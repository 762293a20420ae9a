package search

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/cardexhq/cardex/registry"
)

// Search counts facets and the total in its own pass over the matches
// (collect.go): they must equal what Bleve's facet request over the same
// query returns, over the relevance corpus for every query, scope and a
// few filters.
func TestFacetQuerySelectsSameAgents(t *testing.T) {
	src := newMemSource()
	for _, a := range relevanceAgents(t) {
		src.put(a, registry.ChangeSubmitted)
	}
	x := openTest(t, src)
	filters := []Filters{{}, {Bindings: []string{"JSONRPC"}}, {Tags: []string{"finance", "travel"}}, {InputModes: []string{"text/plain"}}}
	checked := 0
	for _, c := range relevanceCases {
		ws := x.searchWords(c.q)
		for _, v := range []registry.Scope{scopeAnonymous, scopeAdmin} {
			for _, f := range filters {
				full := bleve.NewSearchRequestOptions(buildQuery(textQuery(c.q, ws), v, f), 0, 0, false)
				addFacets(full)
				want, err := x.run(t.Context(), full)
				if err != nil {
					t.Fatal(err)
				}
				if want.Total == 0 {
					continue // Search then retries with typos allowed
				}
				got := mustSearch(t, x, Query{Q: c.q, Scope: v, Filters: f})
				if fmt.Sprint(got.Facets) != fmt.Sprint(facetsOf(want)) || got.TotalSize != int(want.Total) {
					t.Fatalf("%q scope %v filters %+v: facets %v total %d, want %v total %d",
						c.q, v, f, got.Facets, got.TotalSize, facetsOf(want), want.Total)
				}
				if want.Total > 0 {
					checked++
				}
			}
		}
	}
	if checked < len(relevanceCases) {
		t.Fatalf("only %d non-empty comparisons", checked)
	}
}

// Facets and pages are cached per index epoch: every later page of a query
// shows the facets of the first, and an applied change or a rebuild is seen
// by the next query, never hidden behind the cache.
func TestCacheFollowsWrites(t *testing.T) {
	src := filterCorpus()
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{})
	q := Query{Q: "travel", PageSize: 1}
	p1 := mustSearch(t, x, q)
	if p1.TotalSize != 2 || p1.NextPageToken == "" {
		t.Fatalf("page 1: total %d token %q", p1.TotalSize, p1.NextPageToken)
	}
	wantTags := []FacetValue{{"travel", 2}, {"finance", 1}}
	if !slices.Equal(p1.Facets.Tags, wantTags) {
		t.Fatalf("page 1 tags %v", p1.Facets.Tags)
	}
	p2 := mustSearch(t, x, Query{Q: "travel", PageSize: 1, PageToken: p1.NextPageToken})
	if fmt.Sprint(p2.Facets) != fmt.Sprint(p1.Facets) || len(p2.Hits) != 1 || p2.Hits[0].ID == p1.Hits[0].ID {
		t.Fatalf("page 2 = %+v", p2)
	}
	if again := mustSearch(t, x, q); fmt.Sprint(again) != fmt.Sprint(p1) {
		t.Fatalf("repeated page 1 differs:\n%+v\n%+v", again, p1)
	}

	// An applied change moves the epoch on.
	a8 := testAgent("a8", "Hotel", "Travel stays", skill("stay", "Stays", "Books rooms", "travel", "lodging"))
	src.put(a8, registry.ChangeSubmitted)
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := mustSearch(t, x, q)
	wantTags = []FacetValue{{"travel", 3}, {"finance", 1}, {"lodging", 1}}
	if r.TotalSize != 3 || !slices.Equal(r.Facets.Tags, wantTags) {
		t.Fatalf("after sync: total %d tags %v", r.TotalSize, r.Facets.Tags)
	}

	// So does a rebuild's swap (the source changed without a Sync).
	a8.Status = registry.StatusRemoved
	src.put(a8, registry.ChangeRemoved)
	if err := x.Rebuild(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	r = mustSearch(t, x, q)
	if r.TotalSize != 2 || !slices.Equal(r.Facets.Tags, []FacetValue{{"travel", 2}, {"finance", 1}}) {
		t.Fatalf("after rebuild: total %d tags %v", r.TotalSize, r.Facets.Tags)
	}
}

// A caller owns the Result it gets: editing it does not change what the
// cache serves next.
func TestCachedResultIsCallersCopy(t *testing.T) {
	x := openTest(t, filterCorpus())
	q := Query{Q: "finance"}
	r := mustSearch(t, x, q)
	want := fmt.Sprint(r)
	if len(r.Hits) == 0 || len(r.Hits[0].Matches) == 0 || len(r.Facets.Tags) == 0 {
		t.Fatalf("result = %+v", r)
	}
	r.Hits[0].Name = "changed"
	r.Hits[0].Matches[0].Fragments[0] = "changed"
	r.Facets.Tags[0].Count = 99
	if got := fmt.Sprint(mustSearch(t, x, q)); got != want {
		t.Fatalf("cached result changed by a caller:\n got %s\nwant %s", got, want)
	}
}

// CacheEntries < 0 turns caching off; results are the same.
func TestCacheDisabled(t *testing.T) {
	src := filterCorpus()
	on := openTest(t, src)
	off, err := Open(t.TempDir(), Options{LockTimeout: 200 * time.Millisecond, CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = off.Close() })
	if err := off.Rebuild(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{{}, {Q: "travel"}, {Q: "finance", Filters: Filters{Trust: []string{"verified"}}}} {
		a, b := mustSearch(t, on, q), mustSearch(t, off, q)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%+v: cached %+v, uncached %+v", q, a, b)
		}
	}
	if off.cache.len() != 0 || on.cache.len() == 0 {
		t.Fatalf("cache sizes: on %d, off %d", on.cache.len(), off.cache.len())
	}
}

// The cache holds at most its bound, dropping the least recently used.
func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU(2, DefaultCacheBytes)
	k := func(i int) cacheKey { return cacheKey{kind: cachePage, query: fmt.Sprint(i)} }
	c.put(k(1), 1)
	c.put(k(2), 2)
	if _, ok := c.get(k(1)); !ok { // 1 is now the most recent
		t.Fatal("1 missing")
	}
	c.put(k(3), 3)
	if _, ok := c.get(k(2)); ok {
		t.Fatal("2 should have been evicted")
	}
	for _, i := range []int{1, 3} {
		if v, ok := c.get(k(i)); !ok || v.(int) != i {
			t.Fatalf("get %d = %v, %v", i, v, ok)
		}
	}
	if c.len() != 2 {
		t.Fatalf("len %d", c.len())
	}
	// Another epoch is another key.
	if _, ok := c.get(cacheKey{kind: cachePage, query: "1", epoch: 1}); ok {
		t.Fatal("hit across epochs")
	}
}

// The cache also holds at most about its bytes: pages with long highlights
// push out older ones, and a value larger than the whole bound is not kept.
func TestLRUBoundsBytes(t *testing.T) {
	c := newLRU(1000, 40_000)
	k := func(i int) cacheKey { return cacheKey{kind: cachePage, query: fmt.Sprint(i)} }
	page := func(fragment int) *Result {
		return &Result{Hits: []Hit{{ID: "a", Matches: []Match{{Field: "description", Fragments: []string{strings.Repeat("x", fragment)}}}}}}
	}
	for i := range 10 {
		c.put(k(i), page(9_000))
	}
	if c.len() != 4 || c.bytes > 40_000 {
		t.Fatalf("%d entries, %d bytes: want the 4 newest within 40,000", c.len(), c.bytes)
	}
	for i := 6; i < 10; i++ {
		if _, ok := c.get(k(i)); !ok {
			t.Fatalf("page %d, among the newest, was evicted", i)
		}
	}
	c.put(k(99), page(50_000))
	if _, ok := c.get(k(99)); ok || c.len() != 4 {
		t.Fatalf("a page over the whole bound was kept (%d entries)", c.len())
	}
	if newLRU(10, -1) != nil {
		t.Fatal("a negative byte bound must disable the cache")
	}
}

// The facet tables (facettable.go) must count what Bleve counts while the
// index changes under them: documents spread over many segments, updated
// agents (the old version deleted in its segment), removed agents, and
// merges retiring segments. Every round compares Search's facets with a
// Bleve facet request over the same query.
func TestFacetTablesFollowSegmentsAndDeletes(t *testing.T) {
	src := filterCorpus()
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{BatchSize: 1}) // one segment per change
	queries := []Query{{}, {Q: "finance"}, {Q: "travel", Filters: Filters{Bindings: []string{"GRPC", "JSONRPC"}}}, {Scope: scopeAdmin}}
	compare := func(round int) {
		t.Helper()
		for _, q := range queries {
			var fq = buildQuery(nil, q.Scope, q.Filters)
			if ws := x.searchWords(q.Q); len(ws) > 0 {
				fq = buildQuery(textQuery(q.Q, ws), q.Scope, q.Filters)
			}
			req := bleve.NewSearchRequestOptions(fq, 0, 0, false)
			addFacets(req)
			want, err := x.run(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			got := mustSearch(t, x, q)
			if fmt.Sprint(got.Facets) != fmt.Sprint(facetsOf(want)) || got.TotalSize != int(want.Total) {
				t.Fatalf("round %d %+v: facets %v total %d, Bleve %v total %d", round, q, got.Facets, got.TotalSize, facetsOf(want), want.Total)
			}
		}
	}
	compare(0)
	for i := range 12 {
		a := testAgent(fmt.Sprintf("n%02d", i), fmt.Sprintf("New %d", i), "Finance and travel",
			skill("s", "Skill", "does finance", fmt.Sprintf("tag%d", i%3), "travel"))
		if i%2 == 0 {
			a.Card.Interfaces[0].Binding = "GRPC"
		}
		src.put(a, registry.ChangeSubmitted)
		if i%4 == 3 { // update an earlier agent: its old document is deleted
			old := testAgent(fmt.Sprintf("n%02d", i-2), "Renamed", "Finance only", skill("s", "Skill", "finance", "finance"))
			src.put(old, registry.ChangeFetched)
		}
		if i == 7 {
			gone := testAgent("a2", "Bravo", "Trips and money", skill("fx", "FX", "Converts money", "finance", "travel"))
			gone.Status = registry.StatusRemoved
			src.put(gone, registry.ChangeRemoved)
		}
		if err := ix.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		compare(i + 1)
	}
	if n := len(x.cur.facets.segs); n == 0 {
		t.Fatal("no facet tables were built")
	}
}

// facetsOf names each facet's most frequent values, ties by value, however
// many values were counted: the same lists as sorting every counted value.
func TestFacetsOfKeepsTheMostFrequent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		ft := newFacetTables()
		var counts []int32
		for i, spec := range facetSpecs {
			for v := range r.IntN(3 * spec.size) {
				id := ft.intern(uint8(i), fmt.Sprintf("v%03d-%d", r.IntN(1000), v))
				for int(id) >= len(counts) {
					counts = append(counts, 0)
				}
				counts[id] = int32(r.IntN(6)) // many ties, some zero
			}
		}
		got := ft.facetsOf(counts)
		for i, spec := range facetSpecs {
			var want []FacetValue
			for id, c := range counts {
				if c > 0 && int(ft.fieldOf[id]) == i {
					want = append(want, FacetValue{Value: ft.names[id], Count: int(c)})
				}
			}
			slices.SortFunc(want, func(a, b FacetValue) int {
				return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
			})
			want = want[:min(len(want), spec.size)]
			if g := facetByName(got, spec.name); !slices.Equal(g, want) && (len(g) > 0 || len(want) > 0) {
				t.Fatalf("round %d, %s:\n got %v\nwant %v", round, spec.name, g, want)
			}
		}
	}
}

func facetByName(f Facets, name string) []FacetValue {
	return map[string][]FacetValue{fieldTags: f.Tags, fieldInputModes: f.InputModes, fieldOutputModes: f.OutputModes,
		fieldBindings: f.Bindings, fieldSchemes: f.SecuritySchemes, fieldProtocols: f.ProtocolVersions,
		fieldCapabilities: f.Capabilities, fieldExtensions: f.Extensions, fieldTrust: f.Trust,
		fieldProviderFacet: f.Providers, fieldLiveness: f.Liveness}[name]
}

func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		xs := make([]int32, 1+r.IntN(300))
		span := 1 + r.IntN(50)
		for i := range xs {
			xs[i] = int32(r.IntN(span))
		}
		if r.IntN(4) == 0 {
			slices.Sort(xs)
		}
		k := 1 + r.IntN(len(xs))
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		want := sorted[len(sorted)-k]
		if got := kthLargest(xs, k); got != want {
			t.Fatalf("k=%d of %v: %d, want %d", k, sorted, got, want)
		}
	}
}
