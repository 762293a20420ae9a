package search

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
)

// DefaultSynonyms are the groups of words a query also looks for (at half
// weight) when it has one of them: words that agents and their users word
// differently for the same thing, and the common words of other languages
// for them. They are read from synonyms.txt, a list written for Cardex
// (its header gives the rules). Admins add groups with Options.Synonyms
// (`cardex serve --search-synonyms FILE`, see ParseSynonyms).
var DefaultSynonyms = func() [][]string {
	g, err := ParseSynonyms(strings.NewReader(builtinSynonyms))
	if err != nil {
		panic(err) // a test reads the same file
	}
	return g
}()

//go:embed synonyms.txt
var builtinSynonyms string

// MaxSynonymGroups bounds what an admin's file may add (each group widens
// the queries that use it; the limit keeps a mistaken file from turning
// every query into a large disjunction).
const (
	MaxSynonymGroups    = 1000
	MaxSynonymGroupSize = 16
)

// ParseSynonyms reads synonym groups: one group per line, entries
// separated by commas, `#` starts a comment, blank lines are skipped. An
// entry of one word (or one compound: "TextToSpeech") is what the other
// entries of its group look for; an entry of several words ("exchange
// rate", "speech-to-text") is recognized in a query, where each of its
// words then also looks for the group's one-word entries (see
// synonymTable).
func ParseSynonyms(r io.Reader) ([][]string, error) {
	var out [][]string
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		var group []string
		for w := range strings.SplitSeq(text, ",") {
			if w = strings.TrimSpace(w); w != "" {
				group = append(group, w)
			}
		}
		switch {
		case len(group) == 0:
			continue
		case len(group) == 1:
			return nil, fmt.Errorf("synonyms line %d: a group needs at least two words", line)
		case len(group) > MaxSynonymGroupSize:
			return nil, fmt.Errorf("synonyms line %d: %d words, at most %d", line, len(group), MaxSynonymGroupSize)
		}
		out = append(out, group)
		if len(out) > MaxSynonymGroups {
			return nil, fmt.Errorf("synonyms: more than %d groups", MaxSynonymGroups)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("synonyms: %w", err)
	}
	return out, nil
}

// synonymTable holds analyzed synonym groups. A query word looks for the
// one-word entries of every group one of its entries names (of); a run of
// query words that is a several-word entry looks for them too (phrases).
//
// Stemming must not turn a synonym into another word: Porter stems
// "localize" to "local", which then finds every "local" in the index. A
// one-word entry whose stem drops three bytes or more of the word (a
// derivational suffix: -ize, -ation, -ing) is therefore never looked for
// on another word's behalf, and names its group only for query words that
// keep one more byte of it ("localizing", not "local"). Inflections (-s,
// -es, -ed, -e, -y) drop at most two. A group that means the short word
// names it ("transcript" beside "transcription").
type synonymTable struct {
	groups  [][]string             // per group, the terms it adds to a query
	entries map[string][]synEntry  // term → the one-word entries with that term
	phrases map[string][]synPhrase // first term → the several-word entries
}

// synEntry is a one-word entry: its group, and the prefix a query word's
// lowercased, accent-folded form must have for it to name the group ("" for
// any word with the term).
type synEntry struct {
	group  int
	prefix string
}

// synPhrase is a several-word entry: the first term of each of its words.
type synPhrase struct {
	group int
	terms []string
}

// overStemmed is how many bytes of a word a stem may drop and still be the
// word's: inflections drop at most two.
const overStemmed = 3

func newSynonymTable(an analysis.Analyzer, groups [][]string) *synonymTable {
	t := &synonymTable{entries: map[string][]synEntry{}, phrases: map[string][]synPhrase{}}
	for _, g := range groups {
		gi := len(t.groups)
		var adds []string
		for _, w := range g {
			toks := an.Analyze([]byte(w))
			if len(toks) == 0 {
				continue // a stop word
			}
			var words []string // the first term of each word
			last := -1
			for _, tk := range toks {
				if tk.Position != last {
					words = append(words, string(tk.Term))
					last = tk.Position
				}
			}
			if len(words) > 1 {
				t.phrases[words[0]] = append(t.phrases[words[0]], synPhrase{group: gi, terms: words})
				continue
			}
			term := words[0]
			low := strings.ToLower(string(fold([]byte(strings.TrimSpace(w)))))
			e := synEntry{group: gi}
			if len(low)-len(term) >= overStemmed && strings.HasPrefix(low, term) {
				e.prefix = low[:len(term)+1]
			} else if !slices.Contains(adds, term) {
				adds = append(adds, term)
			}
			if !slices.Contains(t.entries[term], e) {
				t.entries[term] = append(t.entries[term], e)
			}
		}
		t.groups = append(t.groups, adds)
	}
	return t
}

// of returns the terms the query word w also looks for: the one-word
// entries of the groups its own entries name, less its own terms.
func (t *synonymTable) of(w queryWord) []string {
	var out []string
	for _, e := range t.entries[w.terms[0]] {
		if e.prefix == "" || strings.HasPrefix(w.raw, e.prefix) {
			out = t.add(out, e.group, w)
		}
	}
	return out
}

// add appends group g's terms to out, less w's own terms and duplicates.
func (t *synonymTable) add(out []string, g int, w queryWord) []string {
	for _, term := range t.groups[g] {
		if !slices.Contains(w.terms, term) && !slices.Contains(out, term) {
			out = append(out, term)
		}
	}
	return out
}

// knows reports whether w is an entry of some group: a word the lists know
// is a word, not a typo (rank.go tries no spelling near it).
func (t *synonymTable) knows(w queryWord) bool {
	for _, e := range t.entries[w.terms[0]] {
		if e.prefix == "" || strings.HasPrefix(w.raw, e.prefix) {
			return true
		}
	}
	return false
}

// addPhrases adds to each run of ws that is a several-word entry, to each
// of its words, the one-word entries of the entry's group: a document with
// one of them holds all of the run's words (rank.go sets one bit per word).
func (t *synonymTable) addPhrases(ws []queryWord) {
	for i := range ws {
		for _, p := range t.phrases[ws[i].terms[0]] {
			if i+len(p.terms) > len(ws) {
				continue
			}
			run := ws[i : i+len(p.terms)]
			match := true
			for k, term := range p.terms {
				if run[k].terms[0] != term {
					match = false
					break
				}
			}
			if !match {
				continue
			}
			for k := range run {
				for _, term := range t.add(nil, p.group, run[k]) {
					if !slices.Contains(run[k].syns, term) {
						run[k].syns = append(run[k].syns, term)
					}
				}
				run[k].known = true
			}
		}
	}
}
