package search

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
)

// DefaultSynonyms are the groups of words a query also looks for (at half
// weight) when it has one of them: words that agents and their users word
// differently for the same thing. Kept short on purpose: a synonym widens
// every query that has the word. Admins add groups with Options.Synonyms
// (`cardex serve --search-synonyms FILE`, see ParseSynonyms).
var DefaultSynonyms = [][]string{
	{"analyze", "analysis", "analytics", "analyser"},
	{"credential", "secret", "password"},
	{"leaked", "exposed", "leak"},
	{"repository", "repo"},
	{"summarize", "summary", "tldr"},
	{"doctor", "physician", "clinician"},
	{"image", "picture", "photo"},
	{"vulnerability", "cve"},
	{"kubernetes", "k8s"},
	{"email", "mail"},
	{"invoice", "bill"},
	{"cheap", "budget", "inexpensive"},
	{"hotel", "lodging", "accommodation"},
	{"translate", "localize"},
	{"car", "vehicle"},
	{"transcribe", "transcription", "dictation"},
}

// MaxSynonymGroups bounds what an admin's file may add (each group widens
// the queries that use it; the limit keeps a mistaken file from turning
// every query into a large disjunction).
const (
	MaxSynonymGroups    = 1000
	MaxSynonymGroupSize = 16
)

// ParseSynonyms reads synonym groups: one group per line, words separated
// by commas, `#` starts a comment, blank lines are skipped. A word is a
// single word or a hyphenated/compound one ("speech-to-text" adds its
// analyzed first term).
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

// synonymTable maps an analyzed term to the analyzed terms of the other
// words of its groups.
type synonymTable map[string][]string

func newSynonymTable(an analysis.Analyzer, groups [][]string) synonymTable {
	t := synonymTable{}
	for _, g := range groups {
		var terms []string
		for _, w := range g {
			toks := an.Analyze([]byte(w))
			if len(toks) == 0 {
				continue // a stop word
			}
			if term := string(toks[0].Term); !slices.Contains(terms, term) {
				terms = append(terms, term)
			}
		}
		for _, a := range terms {
			for _, b := range terms {
				if a != b && !slices.Contains(t[a], b) {
					t[a] = append(t[a], b)
				}
			}
		}
	}
	return t
}

// of returns the synonyms of term (nil if none).
func (t synonymTable) of(term string) []string { return t[term] }
