package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/corpus"
	"github.com/cardexhq/cardex/search/zapread"
)

// rankCorpus is a 3,000-agent index of the generated corpus and 1–3-word
// queries drawn from its skills, as the load command draws them.
func rankCorpus(t *testing.T) (*Index, []string) {
	t.Helper()
	x, err := Open(t.TempDir(), Options{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	const n = 3000
	if err := x.Rebuild(context.Background(), corpusSource{gen: corpus.New(7), n: n, queries: true}); err != nil {
		t.Fatal(err)
	}
	gen := corpus.New(7)
	r := rand.New(rand.NewPCG(7, 8))
	var qs []string
	for len(qs) < 150 {
		a := gen.Agent(r.IntN(n))
		if a.Card == nil || len(a.Card.Skills) == 0 {
			continue
		}
		s := a.Card.Skills[r.IntN(len(a.Card.Skills))]
		ws := strings.FieldsFunc(s.Name+" "+s.Description, func(r rune) bool { return !unicode.IsLetter(r) })
		k := min(len(ws), 1+r.IntN(3))
		var pick []string
		for _, i := range r.Perm(len(ws))[:k] {
			pick = append(pick, ws[i])
		}
		qs = append(qs, strings.Join(pick, " "))
	}
	// Typos and synonyms take the other paths of a word.
	qs = append(qs, "invoise", "recconciliation payment", "sentiment-analysis", "cafe", "find leaked credentials")
	return x, qs
}

// The text tables select exactly the agents Bleve's searchers select for
// the same words, scope and filters, and count the same facets.
func TestRankSelectsWhatSearchersSelect(t *testing.T) {
	x, qs := rankCorpus(t)
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer x.mu.RUnlock()
	ctx := context.Background()
	scopes := []registry.Scope{{}, {All: true}}
	filters := []Filters{{}, {Bindings: []string{"JSONRPC"}}, {InputModes: []string{"TEXT/plain"}, Trust: []string{"unsigned", "verified"}}}
	checked, nonEmpty := 0, 0
	for i, q := range qs {
		ws := x.searchWords(q)
		if len(ws) == 0 {
			continue
		}
		for _, typos := range []bool{false, true} {
			scope, f := scopes[i%len(scopes)], filters[i%len(filters)]
			var typoTerms [][]string
			if typos {
				typoTerms = typoTermsOf(t, g, ws)
			}
			want, err := g.facets.pass(ctx, g, buildQuery(gateQuery(ws, typoTerms), scope, f), passOptions{k: 10_000, facets: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.facets.rank(ctx, g, rankQuery{words: ws, typos: typos, clauses: scopeClauses(scope, f), k: 10_000})
			if err != nil {
				t.Fatal(err)
			}
			if got.total != want.total {
				t.Fatalf("%q (typos %v): rank found %d agents, searchers %d", q, typos, got.total, want.total)
			}
			if !reflect.DeepEqual(got.facets, want.facets) {
				t.Fatalf("%q: facets differ:\nrank      %+v\nsearchers %+v", q, got.facets, want.facets)
			}
			gotNums, wantNums := nums(got.top), nums(want.top)
			if !slices.Equal(gotNums, wantNums) {
				t.Fatalf("%q: rank and searchers return different agents", q)
			}
			checked++
			if got.total > 0 {
				nonEmpty++
			}
		}
	}
	if nonEmpty < 100 {
		t.Fatalf("only %d of %d checks matched anything: the queries test nothing", nonEmpty, checked)
	}
}

func nums(ds []scoredDoc) []uint64 {
	out := make([]uint64, len(ds))
	for i, d := range ds {
		out[i] = d.num
	}
	slices.Sort(out)
	return out
}

// The page's highlights cut from re-analyzed stored text are the ones cut
// from Bleve's term locations.
func TestRankHighlightsMatchLocations(t *testing.T) {
	x, qs := rankCorpus(t)
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer x.mu.RUnlock()
	ctx := context.Background()
	compared, inQueries := 0, 0
	for _, q := range qs {
		ws := x.searchWords(q)
		if len(ws) == 0 {
			continue
		}
		rq := rankQuery{words: ws, k: 20, runs: x.runs}
		rq.page.from, rq.page.to = 0, 20
		p, err := g.facets.rank(ctx, g, rq)
		if err != nil {
			t.Fatal(err)
		}
		want, err := x.details(ctx, g, textQuery(q, ws), p.top, ws)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.details) != len(p.top) {
			t.Fatalf("%q: %d hits, %d details", q, len(p.top), len(p.details))
		}
		for i, h := range p.top {
			got := p.details[i]
			w, ok := want[h.id]
			if !ok {
				t.Fatalf("%q: hit %d read as %q, which Bleve does not find", q, h.num, h.id)
			}
			got.standing = "" // not a highlight (TestHealthRanksAtEqualRelevance)
			if gm, wm := fmt.Sprint(got.matches()), fmt.Sprint(w.matches()); gm != wm {
				t.Fatalf("%q, agent %s: highlights\n got %s\nwant %s", q, h.id, gm, wm)
			}
			for _, m := range got.matches() {
				if m.Field == MatchQueries {
					inQueries++
				}
			}
			if got.stored != w.stored || !reflect.DeepEqual(got.skills, w.skills) || !slices.Equal(got.queries, w.queries) {
				t.Fatalf("%q, agent %s: stored fields\n got %+v\nwant %+v", q, h.id, got, w)
			}
			if got.bestSkillWords() != w.bestSkillWords() {
				t.Fatalf("%q, agent %s: %d words in one skill, locations say %d", q, h.id, got.bestSkillWords(), w.bestSkillWords())
			}
			compared++
		}
	}
	if compared < 1000 || inQueries < 100 {
		t.Fatalf("compared %d hits, %d with representative queries matched: too few to say anything", compared, inQueries)
	}
}

// A posting's mask has skillBits bits for skills and one per text field.
func TestTextFieldsFitTheMask(t *testing.T) {
	if skillBits+len(textFields) > 32 {
		t.Fatalf("%d skill bits and %d text fields do not fit a uint32 mask", skillBits, len(textFields))
	}
	if fieldBit(len(textFields)-1)&skillMask != 0 {
		t.Fatal("a field bit overlaps the skill bits")
	}
}

func TestWithinEdits(t *testing.T) {
	for _, c := range []struct {
		a, b string
		k    int
		want bool
	}{
		{"invoice", "invoise", 1, true},
		{"invoice", "invoce", 1, true},
		{"invoice", "invoicee", 1, true},
		{"invoice", "inovice", 1, true}, // a swap of neighbours is one edit
		{"complaint", "complianc", 2, true},
		{"complaint", "complianc", 1, false},
		{"invoice", "iovniec", 2, false},
		{"reconciliation", "recconciliation", 2, true},
		{"payment", "pay", 2, false},
		{"abc", "abc", 0, true},
		{"", "ab", 1, false},
	} {
		if got := withinEdits(c.a, c.b, c.k); got != c.want {
			t.Errorf("withinEdits(%q, %q, %d) = %v", c.a, c.b, c.k, got)
		}
	}
}

// A deleted agent leaves the tables' results at once, and the text of a
// segment written after the tables were built is read too.
func TestRankSeesDeletesAndNewSegments(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("agent-1", "Ledger Bot", "reconciles ledgers"), registry.ChangeChanged)
	src.put(testAgent("agent-2", "Invoice Bot", "reads invoices"), registry.ChangeChanged)
	x := openTest(t, src)
	ctx := context.Background()
	find := func(q string) []string {
		t.Helper()
		return hitIDs(mustSearch(t, x, Query{Q: q, Scope: scopeAdmin}))
	}
	if got := find("ledgers"); !slices.Equal(got, []string{"agent-1"}) {
		t.Fatalf("ledgers: %v", got)
	}
	src.purge("agent-1")
	src.put(testAgent("agent-3", "Ledger Auditor", "audits ledgers"), registry.ChangeChanged)
	if err := NewIndexer(x, src, IndexerOptions{}).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := find("ledgers"); !slices.Equal(got, []string{"agent-3"}) {
		t.Fatalf("after the delete and the new agent: %v", got)
	}
}

// gateQuery is the reference the text tables are held to: a relevance
// query's words on the flat text field as Bleve queries (each word's
// terms, synonyms and the near spellings typoTerms chose for it, typos[i]
// for word i; at least minShould words), which select exactly the agents
// textQuery selects since the flat field holds every text field.
func gateQuery(ws []queryWord, typos [][]string) query.Query {
	qs := make([]query.Query, 0, len(ws))
	for i, w := range ws {
		var ts []query.Query
		for _, t := range w.terms {
			ts = append(ts, termQ(fieldText, t, 1))
		}
		for _, t := range w.syns {
			ts = append(ts, termQ(fieldText, t, boostSynonym))
		}
		if i < len(typos) {
			for _, t := range typos[i] {
				ts = append(ts, termQ(fieldText, t, boostFuzzy))
			}
		}
		qs = append(qs, bleve.NewDisjunctionQuery(ts...))
	}
	d := bleve.NewDisjunctionQuery(qs...)
	d.SetMin(float64(minShould(len(ws))))
	return d
}

// typoTermsOf is typoTerms of each word over g's current snapshot.
func typoTermsOf(t *testing.T, g *generation, ws []queryWord) [][]string {
	t.Helper()
	segs := typoSegs(t, g)
	out := make([][]string, len(ws))
	for i, w := range ws {
		out[i] = typoTerms(w, segs)
	}
	return out
}

// typoSegs are the segments of g's current snapshot with their tables.
func typoSegs(t *testing.T, g *generation) []segRef {
	t.Helper()
	adv, err := g.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	snap, ok := zapread.SnapshotOf(r)
	if !ok {
		t.Fatal("not a scorch snapshot")
	}
	var segs []segRef
	for _, s := range snap.Segments() {
		st, err := g.facets.table(s.Segment())
		if err != nil {
			t.Fatal(err)
		}
		ts, err := st.textTable(s.Segment())
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, segRef{text: ts, facets: st})
	}
	return segs
}

// topK keeps exactly the k best of any sequence of offers, ties in score
// broken by document number.
func TestTopKKeepsTheBest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 2, 7, 100} {
		for range 50 {
			var all []scoredDoc
			var h topK
			for i := range r.IntN(400) {
				d := scoredDoc{num: uint64(r.IntN(1000)*1000 + i), score: float64(r.IntN(20))}
				all = append(all, d)
				h.offer(k, d)
			}
			slices.SortFunc(all, compareDocs)
			want := all[:min(k, len(all))]
			got := slices.Clone([]scoredDoc(h))
			slices.SortFunc(got, compareDocs)
			if !slices.Equal(got, want) {
				t.Fatalf("k=%d: kept %v, want %v", k, got, want)
			}
		}
	}
}

// When every document of a segment holds every term of a query, the pass
// touches each once and still counts them all (its touched list has room
// for the last one).
func TestRankEveryDocumentTouched(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("agent-1", "Invoice Ledger", "invoice ledger bills"), registry.ChangeChanged)
	src.put(testAgent("agent-2", "Ledger of invoices", "bill and invoice ledgers"), registry.ChangeChanged)
	x := openTest(t, src)
	for _, q := range []string{"invoice ledger", "ledger invoice bill", "invoice"} {
		r := mustSearch(t, x, Query{Q: q, Scope: scopeAdmin})
		if got := hitIDs(r); r.TotalSize != 2 || len(got) != 2 {
			t.Fatalf("%q: %d agents %v, want both", q, r.TotalSize, got)
		}
	}
}

// countDense counts each common value's matches exactly, however many
// common values there are (four per walk, then the rest).
func TestCountDense(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for values := range 10 {
		n := 1 + r.IntN(3000)
		words := (n + 63) / 64
		st := &segTable{}
		matched := make([]uint64, words)
		for d := range n {
			if r.IntN(3) == 0 {
				matched[d/64] |= 1 << (d % 64)
			}
		}
		want := make([]int32, values+1)
		for v := range values {
			docs := make([]uint64, words)
			for d := range n {
				if r.IntN(2) == 0 {
					docs[d/64] |= 1 << (d % 64)
					if matched[d/64]&(1<<(d%64)) != 0 {
						want[v+1]++
					}
				}
			}
			st.dense = append(st.dense, denseValue{id: uint32(v + 1), docs: docs})
		}
		got := make([]int32, values+1)
		(&accum{matched: matched}).countDense(st, got)
		if !slices.Equal(got, want) {
			t.Fatalf("%d values over %d documents: counted %v, want %v", values, n, got, want)
		}
	}
}

// seek finds what a binary search over the rest of the postings finds,
// for documents asked in ascending order.
func TestSeek(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 500 {
		var docs []uint32
		for d := uint32(0); len(docs) < r.IntN(200); d += 1 + uint32(r.IntN(20)) {
			docs = append(docs, d)
		}
		from, d := 0, uint32(0)
		for range 30 {
			d += uint32(r.IntN(40))
			wantK, wantFound := slices.BinarySearch(docs, d)
			k, found := seek(docs, from, d)
			if k != wantK || found != wantFound {
				t.Fatalf("seek(%v, %d, %d) = %d, %v; want %d, %v", docs, from, d, k, found, wantK, wantFound)
			}
			from = k
			d++
		}
	}
}

// Finished passes' accums are reused by the next ones, and the list keeps
// at most maxFreeAccums of them whatever ran at once.
func TestFreeAccumsBounded(t *testing.T) {
	for len(freeAccums) > 0 { // what other tests left
		<-freeAccums
	}
	a := getAccum(100)
	if len(a.slots) != 100 || cap(a.touched) < 101 {
		t.Fatalf("new accum: %d slots, touched cap %d", len(a.slots), cap(a.touched))
	}
	putAccum(a)
	if b := getAccum(50); b != a || len(b.slots) != 100 {
		t.Fatalf("the accum put back was not reused (same %t, %d slots)", b == a, len(b.slots))
	}
	held := make([]*accum, maxFreeAccums+3)
	for i := range held {
		held[i] = getAccum(10)
	}
	for _, h := range held {
		putAccum(h)
	}
	if n := len(freeAccums); n != maxFreeAccums {
		t.Fatalf("the list holds %d accums, want %d", n, maxFreeAccums)
	}
	for len(freeAccums) > 0 {
		<-freeAccums
	}
}

// fuzzy compares only the run of terms that begin with the word's first
// byte, and finds exactly what comparing every term of the segment finds.
func TestFuzzyFindsWhatAFullScanFinds(t *testing.T) {
	x, _ := rankCorpus(t)
	g, err := x.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer x.mu.RUnlock()
	var ts *textSeg
	segs := typoSegs(t, g)
	for _, s := range segs {
		if ts == nil || s.text.n > ts.n {
			ts = s.text
		}
	}
	if !ts.sorted || len(ts.termList) < 1000 {
		t.Fatalf("the corpus segment's %d terms are sorted: %v", len(ts.termList), ts.sorted)
	}
	full := func(word string, first byte) []uint32 {
		if len(word) < minFuzzyWordBytes {
			return nil
		}
		maxDist := 1
		if len(word) >= 8 {
			maxDist = 2
		}
		var out []uint32
		for id, tm := range ts.termList {
			if tm != word && tm[0] == first && withinEdits(word, tm, maxDist) {
				out = append(out, uint32(id))
			}
		}
		return out
	}
	unsorted := &textSeg{termList: ts.termList} // sorted false: every term compared
	r := rand.New(rand.NewPCG(3, 4))
	found := 0
	for i := 0; i < 400; i++ {
		word := []byte(ts.termList[r.IntN(len(ts.termList))])
		if len(word) > 2 {
			// A typo: one byte changed after the first.
			word[1+r.IntN(len(word)-1)] = byte('a' + r.IntN(26))
		}
		w := string(word)
		want := full(w, w[0])
		if got := ts.fuzzy(w, w[0]); !slices.Equal(got, want) {
			t.Fatalf("fuzzy(%q) = %v, a full scan %v", w, got, want)
		}
		if got := unsorted.fuzzy(w, w[0]); !slices.Equal(got, want) {
			t.Fatalf("fuzzy(%q) over an unsorted list = %v, a full scan %v", w, got, want)
		}
		if len(want) > 0 {
			found++
		}
	}
	if found < 100 {
		t.Fatalf("only %d of 400 typos had near terms: the test compares nothing", found)
	}
	// The first and the last letters of the list, and a byte no term
	// begins with.
	for _, w := range []string{"aaaa" + ts.termList[0], ts.termList[len(ts.termList)-1] + "x", "\x01bcdef"} {
		if got, want := ts.fuzzy(w, w[0]), full(w, w[0]); !slices.Equal(got, want) {
			t.Errorf("fuzzy(%q) = %v, a full scan %v", w, got, want)
		}
	}
}

// allowed takes a segment's deleted documents out of the query's bitset
// whatever the shape of their bitmap: arrays, bitsets and runs, across
// several of roaring's 65,536-document containers.
func TestAllowedTakesOutDeletedDocuments(t *testing.T) {
	const n = 200_003
	r := rand.New(rand.NewPCG(5, 6))
	for name, del := range map[string]*roaring.Bitmap{
		"none": roaring.New(),
		"few":  roaring.BitmapOf(0, 63, 64, 65_535, 65_536, n-1),
		"bitsets": func() *roaring.Bitmap {
			b := roaring.New()
			for range 60_000 {
				b.Add(uint32(r.IntN(n)))
			}
			return b
		}(),
		"runs":      func() *roaring.Bitmap { b := roaring.New(); b.AddRange(10, 150_000); b.RunOptimize(); return b }(),
		"last word": roaring.BitmapOf(n-3, n-2, n-1),
	} {
		ts := &textSeg{n: n}
		a := &accum{}
		if err := ts.allowed(zapread.Segment{}, del, nil, a); err != nil {
			t.Fatal(err)
		}
		if len(a.allowed) != (n+63)/64 {
			t.Fatalf("%s: %d words", name, len(a.allowed))
		}
		for d := uint32(0); d < (n+63)/64*64; d++ {
			got := a.allowed[d/64]&(1<<(d%64)) != 0
			if want := d < n && !del.Contains(d); got != want {
				t.Fatalf("%s: document %d allowed %v, want %v", name, d, got, want)
			}
		}
	}
}

// A term that cannot make a document a match on its own account (the
// second of two words both needed, an exact tag) scores the documents
// already held and touches no other: collect walks only what can match,
// and the matches and their scores are the ones a pass adding every
// posting finds.
func TestAddHeldTouchesOnlyPossibleMatches(t *testing.T) {
	const n = 10
	one := []weight16{toWeight16(1), toWeight16(1), toWeight16(1), toWeight16(1)}
	run := func(held bool) (touched []uint32, top []scoredDoc, total int) {
		a := getAccum(n)
		defer putAccum(a)
		a.allowed = zeroed(a.allowed, 1)
		a.allowed[0] = (1<<n - 1) &^ (1 << 7) // document 7 is out of scope
		a.add([]uint32{1, 2, 3, 7}, one, 1, 1<<0)
		if held {
			a.addHeld([]uint32{2, 3, 4, 5}, one, 2, 1<<1)
		} else {
			a.add([]uint32{2, 3, 4, 5}, one, 2, 1<<1)
		}
		a.addTag([]uint32{3, 5, 6}, 4)
		touched = slices.Clone(a.touched)
		st := &segTable{start: make([]uint32, n+1), rareStart: make([]uint32, n+1)}
		var h topK
		total = a.collect(0, 2, 2, 10, &h, st, nil, false)
		for d := range uint32(n) {
			if a.slots[d] != (slot{}) {
				t.Fatalf("held %v: slot %d not zeroed after collect: %+v", held, d, a.slots[d])
			}
		}
		top = []scoredDoc(h)
		slices.SortFunc(top, compareDocs)
		return touched, top, total
	}
	touched, top, total := run(true)
	if !slices.Equal(touched, []uint32{1, 2, 3}) {
		t.Fatalf("touched %v, want the first word's allowed documents [1 2 3]", touched)
	}
	want := []scoredDoc{{num: 3, score: 7}, {num: 2, score: 3}}
	if total != 2 || !slices.Equal(top, want) {
		t.Fatalf("matches %d %+v, want 2 %+v", total, top, want)
	}
	allTouched, allTop, allTotal := run(false)
	if len(allTouched) <= len(touched) || allTotal != total || !slices.Equal(allTop, top) {
		t.Fatalf("adding every posting: touched %v, matches %d %+v; held: %d %+v", allTouched, allTotal, allTop, total, top)
	}
}

// shrink gives a table's slice an array of its own length when append's
// growth left much of the array unused, and keeps a nearly full one.
func TestShrink(t *testing.T) {
	loose := make([]uint32, 100, 200)
	for i := range loose {
		loose[i] = uint32(i * 3)
	}
	got := shrink(loose)
	if len(got) != 100 || cap(got) != 100 || !slices.Equal(got, loose) || &got[0] == &loose[0] {
		t.Fatalf("loose: len %d cap %d, same array %v", len(got), cap(got), &got[0] == &loose[0])
	}
	tight := make([]uint32, 100, 103)
	got = shrink(tight)
	if len(got) != 100 || cap(got) != 100 || &got[0] != &tight[0] {
		t.Fatalf("tight: len %d cap %d, copied %v", len(got), cap(got), &got[0] != &tight[0])
	}
	if got := shrink([]uint32(nil)); len(got) != 0 {
		t.Fatalf("empty: %v", got)
	}
}
