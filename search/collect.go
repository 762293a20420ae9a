package search

import (
	"context"
	"slices"
	"sort"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cardexhq/cardex/search/zapread"
)

// One pass over the matches of a query gives everything a relevance page
// needs: the total, the facet counts (from the facet tables, facettable.go)
// and the best k documents by score. Bleve's own request would walk the
// matches once for the page and a second request once more for the
// facets.

// scoredDoc is one match of a pass: its number in the reader's snapshot,
// its score and, for skill passes, how many of its skills matched.
type scoredDoc struct {
	num    uint64
	id     string
	score  float64
	skills int
}

// better orders by score, then by document number (stable within a
// snapshot; documents are numbered in id order by a rebuild).
func better(a, b scoredDoc) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.num < b.num
}

// compareDocs sorts best first.
func compareDocs(a, b scoredDoc) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// topK keeps the k best documents: a binary min-heap on "better", the
// worst kept at the root. "better" is a total order (document numbers
// differ), so the documents kept do not depend on the order of offers.
type topK []scoredDoc

func (h *topK) offer(k int, d scoredDoc) {
	switch {
	case k <= 0:
	case len(*h) < k:
		*h = append(*h, d)
		h.up(len(*h) - 1)
	case better(d, (*h)[0]):
		(*h)[0] = d
		h.down(0)
	}
}

// up moves the document at i toward the root while it is worse than its
// parent.
func (h topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// down moves the document at i toward the leaves while a child is worse.
func (h topK) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && better(h[c], h[r]) {
			c = r
		}
		if !better(h[i], h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// passResult is what one pass found.
type passResult struct {
	top    []scoredDoc // best first, ids resolved
	total  int
	facets Facets
	// details of the page's documents, when the pass read them (rank.go):
	// details[i] is top[page.from+i]'s.
	details []hitDetail
}

// passOptions say what a pass computes besides the total.
type passOptions struct {
	k      int  // best documents to keep
	facets bool // count facets
	// skills, when set, is called with each match's term locations
	// (term vectors on) and returns how many of its skills match; a
	// document with none is not a match.
	skills func(dm *search.DocumentMatch) int
}

// pass runs q once over the snapshot the generation's queries read
// (pin.go).
func (t *facetTables) pass(ctx context.Context, g *generation, q query.Query, o passOptions) (passResult, error) {
	r, done, err := g.readers.Get()
	if err != nil {
		return passResult{}, err
	}
	defer done()
	var offsets []uint64
	var tables []*segTable
	if o.facets {
		snap, ok := zapread.SnapshotOf(r)
		if !ok {
			return passResult{}, errNoFacetTable
		}
		segs := snap.Segments()
		offsets = make([]uint64, len(segs))
		tables = make([]*segTable, len(segs))
		var running uint64
		for i, ss := range segs {
			offsets[i] = running
			running += ss.Segment().Count()
			if tables[i], err = t.table(ss.Segment()); err != nil {
				return passResult{}, err
			}
		}
	}

	opts := search.SearcherOptions{IncludeTermVectors: o.skills != nil}
	if o.k == 0 && o.skills == nil {
		opts.Score = "none"
	}
	s, err := q.Searcher(ctx, r, g.idx.Mapping(), opts)
	if err != nil {
		return passResult{}, err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0), IndexReader: r}
	var counts []int32
	if o.facets {
		t.mu.Lock()
		counts = make([]int32, len(t.names))
		t.mu.Unlock()
	}
	var h topK
	total := 0
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return passResult{}, err
			}
		}
		dm, err := s.Next(sctx)
		if err != nil {
			return passResult{}, err
		}
		if dm == nil {
			break
		}
		doc := dm.IndexInternalID.Value()
		skills := 0
		if o.skills != nil {
			if skills = o.skills(dm); skills == 0 {
				sctx.DocumentMatchPool.Put(dm)
				continue
			}
			total += skills
		} else {
			total++
		}
		h.offer(o.k, scoredDoc{num: doc, score: dm.Score, skills: skills})
		sctx.DocumentMatchPool.Put(dm)
		if o.facets {
			i := sort.Search(len(offsets), func(i int) bool { return offsets[i] > doc }) - 1
			st, local := tables[i], doc-offsets[i]
			for _, id := range st.vals[st.start[local]:st.start[local+1]] {
				counts[id]++ // every id was interned before counts was sized
			}
		}
	}
	out := passResult{total: total, top: []scoredDoc(h)}
	slices.SortFunc(out.top, compareDocs)
	for i := range out.top {
		if out.top[i].id, err = zapread.ExternalID(r, out.top[i].num); err != nil {
			return passResult{}, err
		}
	}
	if o.facets {
		out.facets = t.facetsOf(counts)
	}
	return out, nil
}
