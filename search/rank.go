package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/cardexhq/cardex/search/zapread"
)

// rank is a relevance query over the text tables (texttable.go): one pass
// over the postings of the query's terms that counts the total and the
// facets and keeps the best k agents, then the bonuses for the best
// rerankWindow. The score of an agent is, per query word it holds, the
// sum over the word's terms of idf × the posting's field-boosted weight
// (a synonym at boostSynonym, a typo at boostFuzzy), plus boostTag × idf
// when a word is one of its tags as written; the sum is multiplied by the
// share of query words it holds. The best rerankWindow then gain the
// phrase bonus (the query's words in order in the name or description)
// and the one-skill bonus (several query words inside one skill), and are
// multiplied by their standing (health and liveness, standing.go).
type rankQuery struct {
	words   []queryWord
	phrase  [][]string // analyzed terms of q by relative position (nil: none)
	typos   bool
	relaxed bool // half the words suffice (relaxedShould), not minShould
	clauses []filterClause
	k       int
	// page is the range of the best documents whose stored fields and
	// highlights are read (page.to == 0: none), analyzed through runs.
	page struct{ from, to int }
	runs *runCache
}

// qterm is one term a query looks up: the first query word it stands for,
// every word it stands for (one bit each: a synonym of a several-word entry
// stands for each of its words, synonyms.go) and its query weight.
type qterm struct {
	term   string
	word   int
	bits   uint32
	weight float64
}

// accum is the per-segment scratch of one pass, kept in the free list
// between queries: every slot is zero again when a pass puts it back.
type accum struct {
	slots   []slot
	touched []uint32 // documents whose slot the pass changed
	allowed []uint64 // documents the query may return (textSeg.allowed)
	union   []uint64 // a filter clause's values (textSeg.allowed)
	dead    []uint64 // the segment's deleted documents (textSeg.allowed)
	matched []uint64 // matches, when facets are counted by bitsets
	found   []match  // collect's matches
}

// slot is one document's running sum: its score and the query words found
// in it, one bit each.
type slot struct {
	score float32
	words uint32
}

// freeAccums holds the accums of finished passes. An accum of a 100,000-
// agent segment is about 3.5 MB, and the search gate runs a few passes at
// once, so a list holds as many as ever ran at once (up to its capacity):
// a sync.Pool would keep one per scheduler thread (cardex serve runs at
// least 8) in the thread's private slot, where no other thread finds it.
var freeAccums = make(chan *accum, maxFreeAccums)

// maxFreeAccums bounds the accums kept between queries.
const maxFreeAccums = 8

func getAccum(n uint32) *accum {
	var a *accum
	select {
	case a = <-freeAccums:
	default:
		a = &accum{}
	}
	if uint32(len(a.slots)) < n {
		a.slots = make([]slot, n)
	}
	// The terms (add) touch a document once, and add writes one entry
	// past the last: n+1 entries always hold them.
	if cap(a.touched) <= int(n) {
		a.touched = make([]uint32, 0, n+1)
	}
	a.touched = a.touched[:0]
	return a
}

// putAccum keeps a for a later pass, or leaves it to the collector when
// the list is full.
func putAccum(a *accum) {
	select {
	case freeAccums <- a:
	default:
	}
}

// add adds f × each posting's weight to the allowed documents of docs and
// marks them with word (bit). It runs before addTag, so a slot without
// words has not been touched yet; the touched list is written without a
// branch on that (about half the postings are a document's first).
func (a *accum) add(docs []uint32, ws []weight16, f float32, bit uint32) {
	slots, allowed := a.slots, a.allowed
	touched := a.touched[:cap(a.touched)]
	t := len(a.touched)
	ws = ws[:len(docs)]
	for p, d := range docs {
		if allowed[d/64]&(1<<(d%64)) == 0 {
			continue
		}
		s := &slots[d]
		fresh := 0
		if s.words == 0 {
			fresh = 1
		}
		touched[t] = d
		t += fresh
		s.score += f * ws[p].float()
		s.words |= bit
	}
	a.touched = touched[:t]
}

// addHeld is add for a term that cannot make a document a match on its
// own account: only the documents already holding a query word gain f ×
// the weight and the bit, and none is touched anew.
func (a *accum) addHeld(docs []uint32, ws []weight16, f float32, bit uint32) {
	slots, allowed := a.slots, a.allowed
	ws = ws[:len(docs)]
	for p, d := range docs {
		if allowed[d/64]&(1<<(d%64)) == 0 {
			continue
		}
		s := &slots[d]
		if s.words == 0 {
			continue
		}
		s.score += f * ws[p].float()
		s.words |= bit
	}
}

// addTag adds f to the documents of docs that hold a query word (an exact
// tag has no word bit: a document holding only the tag is no match, so it
// is not touched).
func (a *accum) addTag(docs []uint32, f float32) {
	slots := a.slots
	for _, d := range docs {
		// A held document is an allowed one (add and addHeld).
		if s := &slots[d]; s.words != 0 {
			s.score += f
		}
	}
}

// collect walks the touched documents once, zeroing their slots: those
// holding at least need of the n query words are matches, scored by the
// share of words they hold, offered to h (k best; base is the segment's
// first document number), and their facet values added to counts (the
// common values only marked in a.matched when byBitset). It returns the
// matches.
func (a *accum) collect(base uint64, need, n, k int, h *topK, st *segTable, counts []int32, byBitset bool) int {
	// First the matches (a third of the touched, at random), kept
	// without a branch on each, then their scores and facets.
	if cap(a.found) <= len(a.touched) {
		a.found = make([]match, len(a.touched)+1)
	}
	slots, found := a.slots, a.found[:cap(a.found)]
	m := 0
	for _, d := range a.touched {
		s := slots[d]
		slots[d] = slot{}
		words := bits.OnesCount32(s.words)
		found[m] = match{doc: d, score: s.score, words: uint32(words)}
		keep := 0
		if words >= need {
			keep = 1
		}
		m += keep
	}
	matched := a.matched
	for _, f := range found[:m] {
		d := f.doc
		score := float64(f.score) * float64(f.words) / float64(n)
		// Most matches do not beat the worst kept: test that before
		// building a candidate.
		if len(*h) < k || (k > 0 && score >= (*h)[0].score) {
			h.offer(k, scoredDoc{num: base + uint64(d), score: score})
		}
		if byBitset {
			matched[d/64] |= 1 << (d % 64)
			for _, id := range st.rareVals[st.rareStart[d]:st.rareStart[d+1]] {
				counts[id]++
			}
		} else {
			for _, id := range st.vals[st.start[d]:st.start[d+1]] {
				counts[id]++
			}
		}
	}
	return m
}

// match is a document holding enough query words: its sum and how many
// words it holds.
type match struct {
	doc   uint32
	score float32
	words uint32
}

// countDense adds to counts, for each of st's common values, how many of
// the matches (a.matched) hold it: four values per walk over the matches
// (about a quarter faster than one at a time).
func (a *accum) countDense(st *segTable, counts []int32) {
	matched, ds := a.matched, st.dense
	v := 0
	for ; v+4 <= len(ds); v += 4 {
		d0, d1 := ds[v].docs[:len(matched)], ds[v+1].docs[:len(matched)]
		d2, d3 := ds[v+2].docs[:len(matched)], ds[v+3].docs[:len(matched)]
		var c0, c1, c2, c3 int
		for i, w := range matched {
			c0 += bits.OnesCount64(w & d0[i])
			c1 += bits.OnesCount64(w & d1[i])
			c2 += bits.OnesCount64(w & d2[i])
			c3 += bits.OnesCount64(w & d3[i])
		}
		counts[ds[v].id] += int32(c0)
		counts[ds[v+1].id] += int32(c1)
		counts[ds[v+2].id] += int32(c2)
		counts[ds[v+3].id] += int32(c3)
	}
	for ; v < len(ds); v++ {
		c := 0
		docs := ds[v].docs[:len(matched)]
		for i, w := range matched {
			c += bits.OnesCount64(w & docs[i])
		}
		counts[ds[v].id] += int32(c)
	}
}

// segRef is one segment of the snapshot a pass reads.
type segRef struct {
	text   *textSeg
	facets *segTable
	offset uint64
	ids    []uint32 // the query's terms in text (termIDs)
}

// noTerm is the id of a term a segment does not hold.
const noTerm = ^uint32(0)

// termIDs are the ids of qts' terms in ts (noTerm where absent).
func (ts *textSeg) termIDs(qts []qterm) []uint32 {
	ids := make([]uint32, len(qts))
	for j, q := range qts {
		id, ok := ts.terms[q.term]
		if !ok {
			id = noTerm
		}
		ids[j] = id
	}
	return ids
}

// rank runs rq over the snapshot the generation's queries read (pin.go). It returns
// errNoTextTable when the index is not one the tables can read.
func (t *facetTables) rank(ctx context.Context, g *generation, rq rankQuery) (passResult, error) {
	r, done, err := g.readers.Get()
	if err != nil {
		return passResult{}, err
	}
	defer done()
	snap, ok := zapread.SnapshotOf(r)
	if !ok {
		return passResult{}, errNoTextTable
	}
	ss := snap.Segments()
	segs := make([]segRef, len(ss))
	var running uint64
	live := 0
	for i, s := range ss {
		st, err := t.table(s.Segment())
		if err != nil {
			return passResult{}, err
		}
		ts, err := st.textTable(s.Segment())
		if err != nil {
			return passResult{}, err
		}
		segs[i] = segRef{text: ts, facets: st, offset: running}
		running += s.Segment().Count()
		live += int(s.Count())
	}

	// The terms of the query, with synonyms and (retrying) typos, and
	// their document frequencies over the whole snapshot.
	var qts []qterm
	seen := map[string]int{} // term → its index in qts
	add := func(term string, word int, weight float64) {
		j, ok := seen[term]
		if !ok {
			seen[term] = len(qts)
			qts = append(qts, qterm{term: term, word: word, weight: weight})
			j = len(qts) - 1
		}
		// A term of two words (a word and another's synonym) counts for
		// both, at its larger weight.
		qts[j].bits |= 1 << word
		qts[j].weight = max(qts[j].weight, weight)
	}
	for i, w := range rq.words {
		for _, tm := range w.terms {
			add(tm, i, 1)
		}
		for _, tm := range w.syns {
			add(tm, i, boostSynonym)
		}
	}
	if rq.typos {
		for i, w := range rq.words {
			for _, tm := range typoTerms(w, segs) {
				add(tm, i, boostFuzzy)
			}
		}
	}
	idf := func(df int) float64 { return 1 + math.Log(float64(max(live, 1))/float64(df+1)) }
	termIDF := make([]float64, len(qts))
	for i := range segs {
		segs[i].ids = segs[i].text.termIDs(qts)
	}
	for j := range qts {
		df := 0
		for _, s := range segs {
			if id := s.ids[j]; id != noTerm {
				df += int(s.text.off[id+1] - s.text.off[id])
			}
		}
		termIDF[j] = idf(df)
	}
	tagIDF := make([]float64, len(rq.words))
	for i, w := range rq.words {
		df := 0
		for _, s := range segs {
			df += len(s.text.tags[w.raw])
		}
		tagIDF[i] = idf(df)
	}

	n := len(rq.words)
	need := minShould(n)
	if rq.relaxed {
		need = relaxedShould(n)
	}
	// later[j] is every query word the terms from qts[j] on stand for: a
	// document none of qts[:j] holds can at most hold those, and when
	// they are fewer than need it cannot match, so those terms only add
	// to the documents already held (addHeld). Two words need both: the
	// second word's postings then only score the first's documents.
	later := make([]uint32, len(qts)+1)
	for j := len(qts) - 1; j >= 0; j-- {
		later[j] = later[j+1] | qts[j].bits
	}
	var counts []int32
	t.mu.Lock()
	counts = make([]int32, len(t.names))
	t.mu.Unlock()
	h := make(topK, 0, min(rq.k, 1024))
	total := 0
	for si, s := range segs {
		if err := ctx.Err(); err != nil {
			return passResult{}, err
		}
		ts := s.text
		a := getAccum(ts.n)
		if err := ts.allowed(ss[si].Segment(), ss[si].Deleted(), rq.clauses, a); err != nil {
			putAccum(a)
			return passResult{}, err
		}
		for j, q := range qts {
			if id := s.ids[j]; id != noTerm {
				docs, ws, _ := ts.postings(id)
				if bits.OnesCount32(later[j]) < need {
					a.addHeld(docs, ws, float32(q.weight*termIDF[j]), q.bits)
				} else {
					a.add(docs, ws, float32(q.weight*termIDF[j]), q.bits)
				}
			}
		}
		for i, w := range rq.words {
			a.addTag(ts.tags[w.raw], float32(boostTag*tagIDF[i]))
		}
		// Facets: a match adds its values to the counts; when the
		// matches are many, the common values are counted once each by
		// intersecting the matches with the value's bitset instead.
		st := s.facets
		byBitset := len(a.touched)*st.densePerDoc() > st.denseCost()
		if byBitset {
			a.matched = zeroed(a.matched, (ts.n+63)/64)
		}
		total += a.collect(s.offset, need, n, rq.k, &h, st, counts, byBitset)
		if byBitset {
			a.countDense(st, counts)
		}
		putAccum(a)
	}
	out := passResult{total: total, top: []scoredDoc(h)}
	slices.SortFunc(out.top, compareDocs)

	// Bonuses for the best rerankWindow.
	cands := out.top[:min(len(out.top), rerankWindow)]
	// locate finds the segment of a document number: its index in segs
	// and the document's number in it.
	locate := func(num uint64) (int, uint32) {
		i := sort.Search(len(segs), func(i int) bool { return segs[i].offset > num }) - 1
		return i, uint32(num - segs[i].offset)
	}
	// The phrase as each segment's term ids, and the idf of its words.
	phraseIDs := map[*textSeg][][]uint32{}
	phraseIDF := 0.0
	for _, group := range rq.phrase {
		for j, q := range qts {
			if len(group) > 0 && q.term == group[0] {
				phraseIDF += termIDF[j]
			}
		}
	}
	var demoted map[uint64]string // candidates ranked lower for their health (standing)
	var skillMasks []uint32
	if n > 1 {
		skillMasks = skillWords(cands, qts, n, segs, locate)
	}
	for i := range cands {
		si, d := locate(cands[i].num)
		ts := segs[si].text
		score := cands[i].score
		if len(rq.phrase) > 1 {
			ids, ok := phraseIDs[ts]
			if !ok {
				ids = ts.phraseTerms(rq.phrase)
				phraseIDs[ts] = ids
			}
			for _, pf := range []struct {
				name  bool
				boost float64
			}{{true, boostPhrase}, {false, boostDescPhrase}} {
				if norm, ok := ts.phraseIn(d, pf.name, ids); ok {
					score += pf.boost * phraseIDF * norm / float64(n)
				}
			}
		}
		if n > 1 {
			if best := bestSkillWords(skillMasks[i*n : (i+1)*n]); best > 1 {
				score *= 1 + oneSkillBonus*float64(best-1)/float64(n-1)
			}
		}
		f, why := g.standing.of(ss[si], d)
		if why != "" {
			if demoted == nil {
				demoted = map[uint64]string{}
			}
			demoted[cands[i].num] = why
		}
		cands[i].score = score * f
	}
	slices.SortStableFunc(cands, compareDocs)

	out.facets = t.facetsOf(counts)
	// Only the page's documents are read, by number in the pass's
	// snapshot (no lookup of their ids): the rest of the window is
	// ordered, and a later page is another query.
	if from, to := rq.page.from, min(rq.page.to, len(out.top)); from < to {
		wordOf := make(map[string]int, len(qts)) // term → its query word
		for _, q := range qts {
			wordOf[q.term] = q.word
		}
		hl := newHighlighter(rq.runs, wordOf)
		out.details = make([]hitDetail, 0, to-from)
		for i := from; i < to; i++ {
			si, d := locate(out.top[i].num)
			id, hd, err := readStored(ss[si], segs[si].text, d)
			if err != nil {
				return passResult{}, err
			}
			out.top[i].id = id
			hd = segs[si].text.detail(hd, d, segs[si].ids, hl)
			hd.standing = demoted[out.top[i].num]
			out.details = append(out.details, hd)
		}
	}
	return out, nil
}

// readStored reads document d of segment ss (ts its text table): its id
// and the stored fields a hit shows (a multi-valued field's first value,
// as Bleve's search results give it). A persisted segment's are read from
// its file (zapread.Stored: no page of it is mapped into the process).
func readStored(ss zapread.SegmentSnapshot, ts *textSeg, d uint32) (id string, hd hitDetail, err error) {
	var skills, queries string
	var seen uint8 // hitFields already read, one bit each
	visitDoc := ss.VisitDocument
	if ts.stored != nil {
		visitDoc = ts.stored.Visit
	}
	err = visitDoc(uint64(d), func(field string, _ byte, value []byte, _ []uint64) bool {
		if field == idField {
			id = string(value)
			return true
		}
		i := slices.Index(hitFields, field)
		if i < 0 || seen&(1<<i) != 0 {
			return true
		}
		seen |= 1 << i
		switch field {
		case fieldSkillsStored:
			skills = string(value)
		case fieldQueriesStored:
			queries = string(value)
		default:
			*hd.stored.field(field) = string(value)
		}
		return true
	})
	if err == nil && id == "" {
		err = fmt.Errorf("search: document %d of a segment has no id", d)
	}
	hd.skills = decodeSkills(skills)
	hd.queries = decodeStrings(queries)
	return id, hd, err
}

// idField is the stored field Bleve keeps a document's id in.
const idField = "_id"

// detail adds to hd (readStored) a page hit's highlights: the fields its
// postings say hold a query term are analyzed again, and the words whose
// terms are the query's marked.
func (ts *textSeg) detail(hd hitDetail, d uint32, ids []uint32, hl *highlighter) hitDetail {
	// A field of a skill can hold a query word only if one term's posting
	// names both the field and the skill.
	var where uint32
	var inSkill [32 - skillBits]uint32 // per text field, the skills to read
	for _, id := range ids {
		if id != noTerm {
			if _, m, ok := ts.posting(id, d); ok {
				where |= m
				for fi := range textFields {
					if m&fieldBit(fi) != 0 {
						inSkill[fi] |= m & skillMask
					}
				}
			}
		}
	}
	// This hit's marks go into the page's spare room (each hit's slice is
	// clipped below, so no later hit writes over it).
	if cap(hl.marks) < minSpareMarks {
		hl.marks = make([]mark, 0, spareMarks)
	}
	hd.marks = hl.marks[:0]
	var found []hlWord
	mark := func(field string, skill, item int, text string) {
		found = hl.words(found[:0], text)
		for _, w := range found {
			hd.addMark(field, skill, item, span{w.start, w.end})
			if skill >= 0 {
				hd.addWord(skill, w.word)
			}
		}
	}
	for fi, f := range textFields {
		if where&fieldBit(fi) == 0 {
			continue
		}
		switch f.field {
		case fieldName, fieldDescription, fieldProvider:
			mark(f.field, -1, 0, *hd.stored.field(f.field))
			continue
		case fieldQueries:
			// Agent-level and multi-valued: each query is an item.
			for j, q := range hd.queries {
				mark(f.field, -1, j, q)
			}
			continue
		}
		for i, s := range hd.skills {
			if inSkill[fi]&(1<<min(i, skillBits-1)) == 0 {
				continue
			}
			var values []string
			switch f.field {
			case fieldSkillName:
				values = []string{s.Name}
			case fieldSkillDescription:
				values = []string{s.Description}
			case fieldSkillTags:
				values = s.Tags
			case fieldSkillExamples:
				values = s.Examples
			}
			for j, v := range values {
				mark(f.field, i, j, v)
			}
		}
	}
	hd.sortMarks()
	m := hd.marks
	hd.marks, hl.marks = m[:len(m):len(m)], m[len(m):]
	return hd
}

// A page's marks are allocated spareMarks at a time, and a hit starts a
// new array when fewer than minSpareMarks are left (most hits mark a few
// words, some dozens).
const (
	spareMarks    = 256
	minSpareMarks = 16
)

// skillWords returns, for each candidate i and query word w, the skills
// of the candidate holding w: masks[i*n+w] (skillBits). Each term's
// postings are searched once, forward, for the candidates in document
// order. Typos count for matching, not for the one-skill bonus.
func skillWords(cands []scoredDoc, qts []qterm, n int, segs []segRef, locate func(uint64) (int, uint32)) []uint32 {
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(cands[a].num, cands[b].num) })
	masks := make([]uint32, len(cands)*n)
	for j, q := range qts {
		if q.weight == boostFuzzy {
			continue
		}
		seg, from := -1, 0
		for _, i := range order {
			si, d := locate(cands[i].num)
			if si != seg {
				seg, from = si, 0
			}
			id := segs[si].ids[j]
			if id == noTerm {
				continue
			}
			docs, _, skills := segs[si].text.postings(id)
			k, found := seek(docs, from, d)
			from = k
			if found {
				for w := range n {
					if q.bits&(1<<w) != 0 {
						masks[i*n+w] |= skills[k] & skillMask
					}
				}
			}
		}
	}
	return masks
}

// seek finds d in docs (ascending) at or after from: the index of the
// first document not below d, and whether it is d. It probes forward in
// doubling steps, then searches the last step.
func seek(docs []uint32, from int, d uint32) (int, bool) {
	lo, step := from, 1
	for lo+step < len(docs) && docs[lo+step] < d {
		lo += step
		step *= 2
	}
	hi := min(lo+step+1, len(docs))
	k, found := slices.BinarySearch(docs[lo:hi], d)
	return lo + k, found
}

// bestSkillWords is the most query words one skill holds, given the
// skills of each word (skillWords).
func bestSkillWords(masks []uint32) int {
	best := 0
	for b := range skillBits {
		c := 0
		for _, m := range masks {
			if m&(1<<b) != 0 {
				c++
			}
		}
		best = max(best, c)
	}
	return best
}

// phraseTerms is the phrase in ts's term ids: nil when a word is not in
// the segment at all (no document of it holds the phrase); an empty group
// matches any word.
func (ts *textSeg) phraseTerms(phrase [][]string) [][]uint32 {
	out := make([][]uint32, len(phrase))
	for i, group := range phrase {
		if len(group) == 0 {
			continue
		}
		for _, term := range group {
			if id, ok := ts.terms[term]; ok {
				out[i] = append(out[i], id)
			}
		}
		if out[i] == nil {
			return nil
		}
	}
	return out
}

// phraseIn reports whether document d's name (or description) holds the
// phrase (phraseTerms): a word of each position group at the same
// relative positions. norm is the field's length norm.
func (ts *textSeg) phraseIn(d uint32, name bool, phrase [][]uint32) (norm float64, ok bool) {
	if len(phrase) == 0 {
		return 0, false
	}
	from, to := ts.seqStart[d], ts.nameEnd[d]
	if !name {
		from, to = ts.nameEnd[d], ts.seqStart[d+1]
	}
	terms, pos := ts.seqTerm[from:to], ts.seqPos[from:to]
	holds := func(p uint16, group []uint32) bool {
		for k := range terms {
			if pos[k] == p && slices.Contains(group, terms[k]) {
				return true
			}
		}
		return false
	}
	for k := range terms {
		if !slices.Contains(phrase[0], terms[k]) {
			continue
		}
		all := true
		for off, group := range phrase[1:] {
			if len(group) > 0 && !holds(pos[k]+uint16(off+1), group) {
				all = false
				break
			}
		}
		if all {
			return 1 / math.Sqrt(float64(to-from)), true
		}
	}
	return 0, false
}

// phraseOf groups the analyzed terms of q by position relative to the
// first word; positions between words that were stop words stay empty.
func (x *Index) phraseOf(q string) [][]string {
	toks := x.analyzer.Analyze([]byte(q))
	if len(toks) == 0 {
		return nil
	}
	first := toks[0].Position
	var out [][]string
	for _, tk := range toks {
		i := tk.Position - first
		if i < 0 || i >= MaxQueryWords*2 {
			continue
		}
		for len(out) <= i {
			out = append(out, nil)
		}
		if term := string(tk.Term); !slices.Contains(out[i], term) {
			out[i] = append(out[i], term)
		}
	}
	return out
}
