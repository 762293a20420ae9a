package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cardexhq/cardex/search/zapread"
)

// A relevance query used to walk Bleve's postings through its searchers:
// a conjunction of the viewer's scope term (nearly every agent) with a
// disjunction per query word, a DocumentMatch and a scorer call per match,
// then a second query over the best hundred to score them per field. On
// 100,000 agents a one-to-three-word query matches about 6,000 agents at
// the median and 40,000 at the 90th percentile, and that walk was about
// 9 CPU-ms of the 10 a cold query cost.
//
// Segments never change once written, so, like the facet tables, each
// segment's text is decoded once into flat arrays: for every term of the
// flat text field, its documents with a precomputed weight (the field
// boosts of querybuild.go applied to each field's term frequency and
// length norm) and a mask of the skills holding it; the agent tags for the
// exact tag match; the positions of the name and description words for the
// phrase bonus. A query then adds up word weights over plain arrays, checks
// the scope and filters against per-segment bitsets, and counts the facets
// from the facet table, all in one pass (rank.go).

// errNoTextTable means a segment's text cannot be decoded into a table: a
// segment format the table was not written for (segmentSupported), or more
// documents than it numbers; Search then runs the query through Bleve's
// searchers (fallback.go).
var errNoTextTable = errors.New("search: text table unavailable")

// A posting's mask says where the term is: bit i (i < skillBits) for
// skill i, skills past the last bit sharing it, and bit skillBits+f for
// textFields[f].
const skillBits = 24

func fieldBit(f int) uint32 { return 1 << (skillBits + f) }

const skillMask = 1<<skillBits - 1

// textSeg is one segment's text table.
type textSeg struct {
	n        uint32            // documents in the segment
	terms    map[string]uint32 // flat text term → term id
	termList []string          // term id → term (typo expansion)
	sorted   bool              // termList is in byte order (fuzzy)
	// The postings of term id t are docs[off[t]:off[t+1]] (ascending),
	// each with its field-boosted weight and mask (skillBits).
	off    []uint32
	docs   []uint32
	weight []weight16
	skills []uint32
	// tags: the agent's exact tags (lowercased) → its documents.
	tags map[string][]uint32
	// Name and description words of document d, for phrases: term ids
	// seqTerm[seqStart[d]:seqStart[d+1]] at positions seqPos, the name's
	// first (up to nameEnd[d]), each field in position order.
	seqStart []uint32
	nameEnd  []uint32
	seqTerm  []uint32
	seqPos   []uint16 // positions past 65,535 are not kept

	// sets caches the documents holding one keyword term (scope and
	// filters), as bitsets.
	setMu sync.Mutex
	sets  map[setKey][]uint64

	// stored reads the segment's stored fields from its file (a page's
	// hits, readStored); nil for a segment still in memory, whose
	// stored fields are read through its snapshot.
	stored *zapread.Stored
}

type setKey struct{ field, value string }

// maxCachedSets bounds the keyword bitsets kept per segment (each is one
// bit per document).
const maxCachedSets = 256

// buildTextSeg decodes seg's text fields.
func buildTextSeg(seg zapread.Segment) (*textSeg, error) {
	n64 := seg.Count()
	if !segmentSupported(seg) || n64 > math.MaxUint32-1 {
		return nil, errNoTextTable
	}
	ts := &textSeg{n: uint32(n64), terms: map[string]uint32{}, tags: map[string][]uint32{}, sets: map[setKey][]uint64{}}
	// Opened now, while the decoding snapshot holds the segment: its file
	// may be removed once a merge replaces it.
	if st, ok := seg.OpenStored(); ok {
		ts.stored = st
	}
	err := walkField(seg, fieldText, false, false, func(term string) func(zapread.Posting) {
		ts.terms[term] = uint32(len(ts.termList))
		ts.termList = append(ts.termList, term)
		ts.off = append(ts.off, uint32(len(ts.docs)))
		return func(p zapread.Posting) { ts.docs = append(ts.docs, uint32(p.Number())) }
	})
	if err != nil {
		return nil, err
	}
	ts.off = append(ts.off, uint32(len(ts.docs)))
	ts.docs = shrink(ts.docs)
	ts.sorted = slices.IsSorted(ts.termList)
	weights := make([]float32, len(ts.docs))
	ts.skills = make([]uint32, len(ts.docs))

	type seqTok struct{ doc, field, pos, term uint32 }
	var seq []seqTok
	for fi, f := range textFields {
		isSkill := slices.Contains(skillFields, f.field)
		phrase := f.field == fieldName || f.field == fieldDescription
		var j, end uint32 // the term's postings in the flat field
		err := walkField(seg, f.field, true, isSkill || phrase, func(term string) func(zapread.Posting) {
			id, ok := ts.terms[term]
			if !ok {
				return nil // every field's words are in the flat field
			}
			j, end = ts.off[id], ts.off[id+1]
			return func(p zapread.Posting) {
				d := uint32(p.Number())
				for j < end && ts.docs[j] < d {
					j++
				}
				if j == end || ts.docs[j] != d {
					return
				}
				weights[j] += float32(f.boost * math.Sqrt(float64(p.Frequency())) * p.Norm())
				ts.skills[j] |= fieldBit(fi)
				locs := p.Locations()
				for i := range locs.Len() {
					pos, ap := locs.At(i)
					switch {
					case isSkill:
						if len(ap) > 0 {
							ts.skills[j] |= 1 << min(ap[0], skillBits-1)
						}
					case phrase && pos <= math.MaxUint16:
						which := uint32(0)
						if f.field == fieldDescription {
							which = 1
						}
						seq = append(seq, seqTok{doc: d, field: which, pos: uint32(pos), term: id})
					}
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	ts.weight = make([]weight16, len(weights))
	for i, w := range weights {
		ts.weight[i] = toWeight16(w)
	}

	// Group the words by document (a counting sort), the name's before
	// the description's, each in position order.
	ts.seqStart = make([]uint32, ts.n+1)
	ts.nameEnd = make([]uint32, ts.n)
	for _, tk := range seq {
		ts.seqStart[tk.doc+1]++
		if tk.field == 0 {
			ts.nameEnd[tk.doc]++
		}
	}
	for d := range ts.n {
		ts.seqStart[d+1] += ts.seqStart[d]
		ts.nameEnd[d] += ts.seqStart[d]
	}
	ts.seqTerm = make([]uint32, len(seq))
	ts.seqPos = make([]uint16, len(seq))
	next := slices.Clone(ts.seqStart[:ts.n])
	nextDesc := slices.Clone(ts.nameEnd)
	for _, tk := range seq {
		at := &next[tk.doc]
		if tk.field == 1 {
			at = &nextDesc[tk.doc]
		}
		ts.seqTerm[*at], ts.seqPos[*at] = tk.term, uint16(tk.pos)
		*at++
	}
	for d := range ts.n {
		sortByPos(ts.seqTerm[ts.seqStart[d]:ts.nameEnd[d]], ts.seqPos[ts.seqStart[d]:ts.nameEnd[d]])
		sortByPos(ts.seqTerm[ts.nameEnd[d]:ts.seqStart[d+1]], ts.seqPos[ts.nameEnd[d]:ts.seqStart[d+1]])
	}

	err = walkField(seg, fieldTags, false, false, func(term string) func(zapread.Posting) {
		return func(p zapread.Posting) { ts.tags[term] = append(ts.tags[term], uint32(p.Number())) }
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// shrink returns s in an array of its own length when append's growth
// left a sixteenth or more of s's array unused (a table's slices live as
// long as the segment; slices.Clip keeps the whole array).
func shrink[T any](s []T) []T {
	if cap(s)-len(s) < len(s)/16 {
		return s[:len(s):len(s)]
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// walkField is seg.WalkField with its errors marked as the text table's.
func walkField(seg zapread.Segment, field string, freq, locs bool, term func(string) func(zapread.Posting)) error {
	if err := seg.WalkField(field, freq, locs, term); err != nil {
		return fmt.Errorf("text table: %w", err)
	}
	return nil
}

// sortByPos orders one field's words by position (insertion sort: a
// name or description has few words).
func sortByPos(terms []uint32, pos []uint16) {
	for i := 1; i < len(pos); i++ {
		for j := i; j > 0 && pos[j] < pos[j-1]; j-- {
			pos[j], pos[j-1] = pos[j-1], pos[j]
			terms[j], terms[j-1] = terms[j-1], terms[j]
		}
	}
}

// weight16 is a posting weight with the precision of 8 significant bits
// (the upper half of a float32): ranks differ by under 0.4 %.
type weight16 uint16

func toWeight16(f float32) weight16 { return weight16(math.Float32bits(f) >> 16) }

func (w weight16) float() float32 { return math.Float32frombits(uint32(w) << 16) }

// postings returns term id t's documents, weights and skill masks.
func (ts *textSeg) postings(t uint32) ([]uint32, []weight16, []uint32) {
	a, b := ts.off[t], ts.off[t+1]
	return ts.docs[a:b], ts.weight[a:b], ts.skills[a:b]
}

// posting finds document d in term id t's postings.
func (ts *textSeg) posting(t, d uint32) (weight weight16, skills uint32, ok bool) {
	docs, ws, ss := ts.postings(t)
	i, found := slices.BinarySearch(docs, d)
	if !found {
		return 0, 0, false
	}
	return ws[i], ss[i], true
}

// set returns the bitset of the documents holding value in the keyword
// field, reading its postings once.
func (ts *textSeg) set(seg zapread.Segment, field, value string) ([]uint64, error) {
	k := setKey{field, value}
	ts.setMu.Lock()
	s, ok := ts.sets[k]
	ts.setMu.Unlock()
	if ok {
		return s, nil
	}
	s = make([]uint64, (ts.n+63)/64)
	if err := seg.EachDoc(field, value, func(d uint64) { s[d/64] |= 1 << (d % 64) }); err != nil {
		return nil, err
	}
	ts.setMu.Lock()
	if len(ts.sets) < maxCachedSets {
		ts.sets[k] = s
	}
	ts.setMu.Unlock()
	return s, nil
}

// allowed sets a.allowed to the bitset of the documents a query may
// return: live (not deleted), in scope, and passing every filter clause
// (values of a clause ORed, clauses ANDed).
func (ts *textSeg) allowed(seg zapread.Segment, deleted *roaring.Bitmap, clauses []filterClause, a *accum) error {
	words := (ts.n + 63) / 64
	out := resized(a.allowed, words)
	for i := range out {
		out[i] = ^uint64(0)
	}
	if r := ts.n % 64; r != 0 {
		out[len(out)-1] = 1<<r - 1
	}
	a.allowed = out
	for _, c := range clauses {
		var or []uint64
		for i, v := range c.values {
			s, err := ts.set(seg, c.field, v)
			if err != nil {
				return err
			}
			switch {
			case len(c.values) == 1:
				or = s
			case i == 0:
				a.union = append(resized(a.union, 0), s...)
				or = a.union
			default:
				for i := range or {
					or[i] |= s[i]
				}
			}
		}
		for i := range out {
			out[i] &= or[i]
		}
	}
	if deleted == nil || deleted.IsEmpty() {
		return nil
	}
	// The deleted documents as a bitset, taken out a word at a time: a
	// segment whose agents were rewritten holds tens of thousands, and
	// visiting them one by one was a tenth of a query's CPU.
	if deleted.Maximum() >= ts.n {
		// Not a deletion bitmap of this segment; never seen, but never
		// written past out either.
		it := deleted.Iterator()
		for it.HasNext() {
			if d := it.Next(); d < ts.n {
				out[d/64] &^= 1 << (d % 64)
			}
		}
		return nil
	}
	dead := zeroed(a.dead, uint32(deleted.DenseSize()))
	deleted.WriteDenseTo(dead)
	a.dead = dead
	for i, w := range dead {
		out[i] &^= w
	}
	return nil
}

// resized is b with length n, reusing its array when large enough; its
// contents are undefined.
func resized(b []uint64, n uint32) []uint64 {
	if uint32(cap(b)) < n {
		return make([]uint64, n)
	}
	return b[:n]
}

// zeroed is b with length n, all zero.
func zeroed(b []uint64, n uint32) []uint64 {
	b = resized(b, n)
	clear(b)
	return b
}

// fuzzy returns the ids of the terms that begin with the byte first and
// are within the typo distance of word: one edit for words of
// minFuzzyWordBytes or more, two from eight bytes. Typo expansion keeps
// only terms that begin with the word's first letter, and the term list is
// in byte order (the dictionary's, checked when it is built), so only that
// letter's run of terms is compared: a twentieth of the list on English
// text, where every term's distance was once worked out.
func (ts *textSeg) fuzzy(word string, first byte) []uint32 {
	if len(word) < minFuzzyWordBytes {
		return nil
	}
	maxDist := 1
	if len(word) >= 8 {
		maxDist = 2
	}
	lo, hi := 0, len(ts.termList)
	if ts.sorted {
		lo, hi = firstByteRun(ts.termList, first)
	}
	var out []uint32
	for id := lo; id < hi; id++ {
		t := ts.termList[id]
		if t != word && t != "" && t[0] == first && withinEdits(word, t, maxDist) {
			out = append(out, uint32(id))
		}
	}
	return out
}

// firstByteRun is the range of the sorted terms that begin with b.
func firstByteRun(terms []string, b byte) (lo, hi int) {
	lo = sort.Search(len(terms), func(i int) bool { return terms[i] != "" && terms[i][0] >= b })
	hi = lo + sort.Search(len(terms)-lo, func(i int) bool { return terms[lo+i][0] > b })
	return lo, hi
}

// withinEdits reports whether a and b are at most k edits apart, an edit
// being an insertion, deletion or substitution of a byte or a swap of two
// adjacent bytes (the distance Bleve's fuzzy queries use).
func withinEdits(a, b string, k int) bool {
	if d := len(a) - len(b); d > k || -d > k {
		return false
	}
	// Three rows of len(b)+1, on the stack for words of up to 63 bytes.
	var buf [3 * 64]int
	var rows []int
	if n := len(b) + 1; 3*n <= len(buf) {
		rows = buf[:3*n]
	} else {
		rows = make([]int, 3*n)
	}
	n := len(b) + 1
	prev2, prev, cur := rows[:n:n], rows[n:2*n:2*n], rows[2*n:]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			c := min(prev[j-1]+cost, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				c = min(c, prev2[j-2]+1)
			}
			cur[j] = c
			best = min(best, c)
		}
		if best > k {
			return false
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)] <= k
}

// SegmentStats describe the live generation's segments: how many there
// are, the document slots they hold and how many of those slots hold
// deleted documents (an agent rewritten since its segment was written).
// Every relevance query walks each segment's slots, so a large Deleted or
// many Segments make queries dearer (the indexer's compaction keeps them
// down: indexer.go).
type SegmentStats struct {
	Segments int
	Slots    uint64
	Deleted  uint64
	// CompactionDue says the segments are worth merging into one
	// (needsCompaction): the indexer merges them once its gap allows
	// (compactGap), and until then every query walks them all.
	CompactionDue bool
}

// Segments reports the live generation's segments (for /metrics). An index
// the tables cannot read reports zero segments.
func (x *Index) Segments() (SegmentStats, error) {
	g, err := x.acquire()
	if err != nil {
		return SegmentStats{}, err
	}
	defer x.mu.RUnlock()
	st, err := g.segmentStats()
	st.CompactionDue = err == nil && needsCompaction(st, x.opts.compactMin)
	return st, err
}

// segmentStats counts g's segments, their document slots and those holding
// deleted documents.
func (g *generation) segmentStats() (SegmentStats, error) {
	var st SegmentStats
	r, done, err := g.readers.Newest()
	if err != nil {
		return st, err
	}
	defer done()
	snap, ok := zapread.SnapshotOf(r)
	if !ok {
		return st, nil
	}
	for _, ss := range snap.Segments() {
		st.Segments++
		st.Slots += ss.Segment().Count()
		if d := ss.Deleted(); d != nil {
			st.Deleted += d.GetCardinality()
		}
	}
	return st, nil
}

// warm builds the facet and text tables of every segment of g's newest
// snapshot that has none yet, then pins that snapshot for queries
// (pin.go). An index the tables cannot read is left to Bleve's searchers.
//
// built is how many documents the segments it built tables for hold; pin
// says whether it pinned the snapshot.
func (t *facetTables) warm(g *generation) (built uint64, pin bool, err error) {
	r, done, err := g.readers.Newest()
	if err != nil {
		return 0, false, err
	}
	defer func() {
		if pin {
			g.readers.Pin(r) // closed by the pin's last release, not done
		} else {
			done()
		}
	}()
	snap, ok := zapread.SnapshotOf(r)
	if !ok {
		return 0, false, nil
	}
	segs := snap.Segments()
	for _, ss := range segs {
		t.mu.Lock()
		_, known := t.segs[ss.Segment()]
		t.mu.Unlock()
		st, err := t.table(ss.Segment())
		if errors.Is(err, errNoFacetTable) {
			return built, false, nil
		}
		if err != nil {
			return built, false, fmt.Errorf("read facet values: %w", err)
		}
		if _, err := st.textTable(ss.Segment()); err != nil && !errors.Is(err, errNoTextTable) {
			return built, false, fmt.Errorf("read text: %w", err)
		}
		if !known {
			built += ss.Segment().Count()
		}
	}
	t.forget(segs)
	g.standing.forget(segs)
	return built, true, nil
}
