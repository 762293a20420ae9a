package search

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cardexhq/cardex/search/zapread"
)

// Bleve counts a terms facet by reading the doc values of every matching
// document, and doc values are stored in snappy-compressed chunks of 1,024
// documents: a query matching a few thousand of 100,000 agents touches
// nearly every chunk, so each query decompressed all nine facet columns
// (about 28 CPU-ms of a 60 ms query on 100k agents). Segments never change
// once written, so facetTables decodes each segment's facet values once,
// into a table indexed by document number, and a query only walks its
// matching documents and adds up their rows. A segment's table is built by
// the first query that needs it and dropped when merges retire the segment.

// errNoFacetTable means the index is not a scorch index the table can read,
// or a segment is of a format the table was not written for
// (segmentSupported); Search then lets Bleve count the facets.
var errNoFacetTable = errors.New("search: facet table unavailable")

// facetTables is the per-generation cache of segment tables. Values are
// interned once per generation: ids index names and fieldOf.
type facetTables struct {
	mu      sync.Mutex
	ids     map[facetValueKey]uint32
	names   []string
	fieldOf []uint8 // index into facetSpecs
	segs    map[zapread.Segment]*segTable
	// lastLive is forget's previous live segments (retire).
	lastLive map[zapread.Segment]bool
}

type facetValueKey struct {
	field uint8
	value string
}

// segTable holds the facet values of one segment's documents: the values
// of document d are vals[start[d]:start[d+1]]. Nested skill documents have
// none.
type segTable struct {
	once  sync.Once
	err   error
	start []uint32
	vals  []uint32
	// The values held by at least one document in denseShare also have a
	// bitset of their documents (one bit per document): a broad query
	// counts them by intersecting its matches with each, and walks only
	// the other values of each match, rareVals[rareStart[d]:rareStart[d+1]].
	dense     []denseValue
	rareStart []uint32
	rareVals  []uint32

	// The segment's text table (texttable.go), built by the first
	// relevance query that reads the segment.
	textOnce sync.Once
	text     *textSeg
	textErr  error
}

// textTable returns seg's text table, building it on first use.
func (st *segTable) textTable(seg zapread.Segment) (*textSeg, error) {
	st.textOnce.Do(func() { st.text, st.textErr = buildTextSeg(seg) })
	return st.text, st.textErr
}

func newFacetTables() *facetTables {
	return &facetTables{ids: map[facetValueKey]uint32{}, segs: map[zapread.Segment]*segTable{}}
}

var facetFieldNames = func() []string {
	out := make([]string, len(facetSpecs))
	for i, f := range facetSpecs {
		out[i] = f.name
	}
	return out
}()

var facetFieldIndex = func() map[string]uint8 {
	m := make(map[string]uint8, len(facetSpecs))
	for i, f := range facetSpecs {
		m[f.name] = uint8(i)
	}
	return m
}()

// intern returns the id of value in field, adding it when new.
func (t *facetTables) intern(field uint8, value string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := facetValueKey{field, value}
	if id, ok := t.ids[k]; ok {
		return id
	}
	id := uint32(len(t.names))
	t.ids[k] = id
	t.names = append(t.names, value)
	t.fieldOf = append(t.fieldOf, field)
	return id
}

// table returns the table of seg, building it on first use; concurrent
// callers wait for one build.
func (t *facetTables) table(seg zapread.Segment) (*segTable, error) {
	t.mu.Lock()
	st, ok := t.segs[seg]
	if !ok {
		st = &segTable{}
		t.segs[seg] = st
	}
	t.mu.Unlock()
	st.once.Do(func() { st.err = t.build(st, seg) })
	return st, st.err
}

func (t *facetTables) build(st *segTable, seg zapread.Segment) error {
	dv, ok := seg.DocValues(facetFieldNames)
	if !ok || !segmentSupported(seg) {
		return errNoFacetTable
	}
	n := seg.Count()
	st.start = make([]uint32, 0, n+1)
	for d := range n {
		st.start = append(st.start, uint32(len(st.vals)))
		err := dv.Visit(d, func(field string, term []byte) {
			if f, ok := facetFieldIndex[field]; ok {
				st.vals = append(st.vals, t.intern(f, string(term)))
			}
		})
		if err != nil {
			return fmt.Errorf("facet table: %w", err)
		}
	}
	st.start = append(st.start, uint32(len(st.vals)))
	st.vals = shrink(st.vals)
	st.splitDense(n)
	return nil
}

// denseShare: a value held by at least one document in this many gets a
// bitset, which is then no larger than the list of its documents.
const denseShare = 32

type denseValue struct {
	id   uint32
	docs []uint64
}

// splitDense gives the common values their bitsets and lists the rest per
// document.
func (st *segTable) splitDense(n uint64) {
	df := map[uint32]int{}
	for _, id := range st.vals {
		df[id]++
	}
	isDense := map[uint32]int{}
	for id, c := range df {
		if uint64(c)*denseShare >= n {
			isDense[id] = len(st.dense)
			st.dense = append(st.dense, denseValue{id: id, docs: make([]uint64, (n+63)/64)})
		}
	}
	st.rareStart = make([]uint32, 0, n+1)
	for d := range n {
		st.rareStart = append(st.rareStart, uint32(len(st.rareVals)))
		for _, id := range st.vals[st.start[d]:st.start[d+1]] {
			if i, ok := isDense[id]; ok {
				st.dense[i].docs[d/64] |= 1 << (d % 64)
			} else {
				st.rareVals = append(st.rareVals, id)
			}
		}
	}
	st.rareStart = append(st.rareStart, uint32(len(st.rareVals)))
	st.rareVals = shrink(st.rareVals)
}

// denseCost is about what counting the dense values by bitsets costs, in
// the same unit as one match's walk over its dense values.
func (st *segTable) denseCost() int {
	if len(st.dense) == 0 {
		return 0
	}
	return len(st.dense) * len(st.dense[0].docs) / 4
}

// densePerDoc is how many dense values a document holds on average.
func (st *segTable) densePerDoc() int {
	n := len(st.rareStart) - 1
	if n <= 0 {
		return 0
	}
	return (len(st.vals) - len(st.rareVals)) / n
}

// forget drops the tables of segments in neither live nor the live of
// the call before (retire).
func (t *facetTables) forget(live []zapread.SegmentSnapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	retire(t.segs, live, &t.lastLive)
}

// retire deletes from segs the segments in neither live nor *last, then
// makes live the last. Only the indexer's decode calls it (warm), with the
// snapshot it is about to pin: the queries still reading the snapshot
// pinned before, whose segments were the last call's, keep their tables
// until the next decode (pin.go). A query deleting tables by the snapshot
// it read would drop those of the newer one.
func retire[V any](segs map[zapread.Segment]V, live []zapread.SegmentSnapshot, last *map[zapread.Segment]bool) {
	now := make(map[zapread.Segment]bool, len(live))
	for _, ss := range live {
		now[ss.Segment()] = true
	}
	for seg := range segs {
		if !now[seg] && !(*last)[seg] {
			delete(segs, seg)
		}
	}
	*last = now
}

func (t *facetTables) facetsOf(counts []int32) Facets {
	// Only the values that can be among a facet's size most frequent
	// are named and sorted: those counted at least as often as its
	// size-th most frequent value.
	// Values are only ever appended (intern): the ones counts knows
	// stay as they are after the lock.
	t.mu.Lock()
	names, fieldOf := t.names, t.fieldOf
	t.mu.Unlock()
	ids := make([][]uint32, len(facetSpecs))
	for id, c := range counts {
		if c > 0 {
			f := fieldOf[id]
			ids[f] = append(ids[f], uint32(id))
		}
	}
	per := make([][]FacetValue, len(facetSpecs))
	var top []int32
	for i, spec := range facetSpecs {
		vids := ids[i]
		if len(vids) > spec.size {
			top = top[:0]
			for _, id := range vids {
				top = append(top, counts[id])
			}
			least := kthLargest(top, spec.size)
			vids = slices.DeleteFunc(vids, func(id uint32) bool { return counts[id] < least })
		}
		vs := make([]FacetValue, 0, len(vids))
		for _, id := range vids {
			vs = append(vs, FacetValue{Value: names[id], Count: int(counts[id])})
		}
		slices.SortFunc(vs, func(a, b FacetValue) int {
			if a.Count != b.Count {
				return cmp.Compare(b.Count, a.Count)
			}
			return cmp.Compare(a.Value, b.Value)
		})
		per[i] = vs[:min(len(vs), spec.size)]
	}
	byName := func(name string) []FacetValue { return per[facetFieldIndex[name]] }
	return Facets{
		Tags:             byName(fieldTags),
		InputModes:       byName(fieldInputModes),
		OutputModes:      byName(fieldOutputModes),
		Bindings:         byName(fieldBindings),
		SecuritySchemes:  byName(fieldSchemes),
		ProtocolVersions: byName(fieldProtocols),
		Capabilities:     byName(fieldCapabilities),
		Extensions:       byName(fieldExtensions),
		Trust:            byName(fieldTrust),
		Providers:        byName(fieldProviderFacet),
		Liveness:         byName(fieldLiveness),
	}
}

// kthLargest returns the k-th largest of xs (1 ≤ k ≤ len(xs)), reordering
// xs: a selection that only follows the side holding it.
func kthLargest(xs []int32, k int) int32 {
	lo, hi, want := 0, len(xs)-1, k-1 // want: the index in descending order
	for lo < hi {
		// Median of three as the pivot keeps sorted and equal runs fast.
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		// Three-way partition, descending: > pivot, == pivot, < pivot.
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case xs[i] > pivot:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case xs[i] < pivot:
				xs[i], xs[gt] = xs[gt], xs[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case want < lt:
			hi = lt - 1
		case want > gt:
			lo = gt + 1
		default:
			return pivot
		}
	}
	return xs[want]
}
