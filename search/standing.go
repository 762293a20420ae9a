package search

import (
	"strings"
	"sync"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/zapread"
)

// What a relevance query weighs besides the text: whether the agent
// answers (standingTables), and which near spellings a word may be read as
// when nothing matched as written (typoTerms). docs/design.md "Search
// relevance" gives the reasons.

// Standing factors: an agent's score is multiplied by the lowest that
// applies, so at equal text relevance one that answers ranks above one
// whose card fetches fail or whose A2A endpoint does not answer
// (docs/liveness.md). A factor is small next to the field boosts: a much
// better match still ranks first.
const (
	standingDegraded = 0.97 // liveness degraded: some interfaces answer
	standingFailing  = 0.9  // health failing or gone, or liveness unreachable
)

// MatchHealth is the Match.Field of the line that says an agent ranked
// lower for its health or liveness; its one fragment says which.
const MatchHealth = "health"

// Why an agent ranked lower (MatchHealth's fragment), most serious first.
const (
	whyCardFailing = "ranked lower: its card cannot be fetched (health failing or gone)"
	whyUnreachable = "ranked lower: its A2A endpoint does not answer"
	whyDegraded    = "ranked lower: some of its A2A interfaces do not answer"
)

// standingTables hold, per segment of a generation, each document's
// standing code (standingFine…standingCard), decoded from its doc values
// once by the first relevance query that ranks one of its documents:
// reading two doc values per candidate at query time cost more than the
// rest of the query.
type standingTables struct {
	mu       sync.Mutex
	segs     map[zapread.Segment]*standingSeg
	lastLive map[zapread.Segment]bool // forget's previous live segments
}

type standingSeg struct {
	once  sync.Once
	codes []uint8 // nil: the segment's doc values cannot be read (all fine)
}

// Standing codes.
const (
	standingFine uint8 = iota
	standingDegradedCode
	standingUnreachable
	standingCard // health failing or gone
)

func newStandingTables() *standingTables {
	return &standingTables{segs: map[zapread.Segment]*standingSeg{}}
}

// of returns document d's factor and, when below 1, why.
func (t *standingTables) of(ss zapread.SegmentSnapshot, d uint32) (float64, string) {
	seg := ss.Segment()
	t.mu.Lock()
	st, ok := t.segs[seg]
	if !ok {
		st = &standingSeg{}
		t.segs[seg] = st
	}
	t.mu.Unlock()
	st.once.Do(func() { st.codes = standingCodes(seg) })
	if int(d) >= len(st.codes) {
		return 1, ""
	}
	switch st.codes[d] {
	case standingCard:
		return standingFailing, whyCardFailing
	case standingUnreachable:
		return standingFailing, whyUnreachable
	case standingDegradedCode:
		return standingDegraded, whyDegraded
	}
	return 1, ""
}

// forget drops the tables of segments in neither live nor the live of
// the call before (retire).
func (t *standingTables) forget(live []zapread.SegmentSnapshot) {
	t.mu.Lock()
	defer t.mu.Unlock()
	retire(t.segs, live, &t.lastLive)
}

// standingCodes reads every document's default order (defaultRank:
// orderFailing is health failing or gone) and liveness.
func standingCodes(seg zapread.Segment) []uint8 {
	dv, ok := seg.DocValues(standingFields)
	if !ok {
		return nil
	}
	n := seg.Count()
	codes := make([]uint8, n)
	for d := range n {
		var c uint8
		err := dv.Visit(d, func(field string, term []byte) {
			switch {
			case field == fieldOrder && string(term) == orderFailing:
				c = max(c, standingCard)
			case field == fieldLiveness && string(term) == string(registry.LivenessUnreachable):
				c = max(c, standingUnreachable)
			case field == fieldLiveness && string(term) == string(registry.LivenessDegraded):
				c = max(c, standingDegradedCode)
			}
		})
		if err != nil {
			return nil
		}
		codes[d] = c
	}
	return codes
}

var standingFields = []string{fieldOrder, fieldLiveness}

// typoRarity is how many times more agents a near spelling must be in than
// the query word itself for the word to be read as a typo of it.
const typoRarity = 4

// typoTerms are the index terms w may be a typo of, when nothing matched
// as written. Only edits that are likely typos count:
//
//   - never for a word the synonym lists know (w.known): "facture" is a
//     French word, not a typo of "factor";
//   - only toward terms that start with the word's first letter and are in
//     at least typoRarity times as many agents as the word itself (a word
//     the index holds often is not a typo);
//   - only the nearest: terms one edit away (from the stem or from the word
//     as written) hide those two edits away, and among the nearest only
//     those in at least a quarter as many agents as the most common one.
func typoTerms(w queryWord, segs []segRef) []string {
	word := w.terms[0]
	if w.known || len(word) < minFuzzyWordBytes {
		return nil
	}
	df := func(term string) int {
		n := 0
		for _, s := range segs {
			if id, ok := s.text.terms[term]; ok {
				n += int(s.text.off[id+1] - s.text.off[id])
			}
		}
		return n
	}
	own := df(word)
	type cand struct {
		term string
		near bool // one edit away
		df   int
	}
	var cs []cand
	seen := map[string]bool{}
	// Near the stem, and near the word as written: Porter cuts a typo
	// where it would not cut the word ("sentimant" → "sentim", while
	// "sentiment" stays whole).
	forms := []string{word}
	if w.raw != word && len(w.raw) >= minFuzzyWordBytes && !strings.ContainsFunc(w.raw, func(r rune) bool { return r >= 0x80 }) {
		forms = append(forms, w.raw)
	}
	for _, form := range forms {
		for _, s := range segs {
			for _, id := range s.text.fuzzy(form, word[0]) {
				t := s.text.termList[id]
				if seen[t] || t == word {
					continue
				}
				seen[t] = true
				cs = append(cs, cand{term: t, near: withinEdits(form, t, 1)})
			}
		}
	}
	anyNear, most := false, 0
	for i := range cs {
		cs[i].df = df(cs[i].term)
		anyNear = anyNear || cs[i].near
	}
	keep := cs[:0]
	for _, c := range cs {
		if (c.near || !anyNear) && c.df >= typoRarity*own && c.df > 0 {
			keep = append(keep, c)
			most = max(most, c.df)
		}
	}
	var out []string
	for _, c := range keep {
		if 4*c.df >= most {
			out = append(out, c.term)
		}
	}
	return out
}
