package search

import (
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cardexhq/cardex/registry"
)

// Query-time boosts per field: a match in a name or skill name outranks a
// passing mention in a description; a synonym counts less than the word.
// Words found within one skill are rewarded after the pass (oneSkillBonus).
const (
	boostName         = 5.0
	boostPhrase       = 5.0
	boostDescription  = 1.5
	boostDescPhrase   = 2.0
	boostProvider     = 1.5
	boostTag          = 2.0
	boostSkillName    = 3.0
	boostSkillDesc    = 1.0
	boostSkillTags    = 2.0
	boostSkillEx      = 0.5
	boostQueries      = 0.5 // a catalog entry's representativeQueries, like skill examples
	boostSynonym      = 0.5
	boostFuzzy        = 0.3
	minFuzzyWordBytes = 5 // shorter words are not tried with typos
)

// textFields are the analyzed fields a query word is looked up in.
var textFields = []struct {
	field string
	boost float64
}{
	{fieldName, boostName},
	{fieldDescription, boostDescription},
	{fieldProvider, boostProvider},
	{fieldSkillName, boostSkillName},
	{fieldSkillDescription, boostSkillDesc},
	{fieldSkillTags, boostSkillTags},
	{fieldSkillExamples, boostSkillEx},
	{fieldQueries, boostQueries},
}

// skillFields are the text fields whose locations name a skill.
var skillFields = []string{fieldSkillName, fieldSkillDescription, fieldSkillTags, fieldSkillExamples}

// queryWord is one word of q after analysis.
type queryWord struct {
	raw   string   // lowercased, accent-folded word as written: the exact tag lookup
	terms []string // analyzed terms: the word and, for compounds, its parts
	syns  []string // analyzed terms of its synonyms (synonyms.go)
	known bool     // an entry of a synonym group: a word, never taken for a typo
}

// searchWords analyzes q into words with the index analyzer (stop words
// dropped, stemmed, compounds split), at most MaxQueryWords, adding each
// word's synonyms. Nothing in q is ever parsed as query syntax (G.71): the
// words become term queries. Filler words of questions ("find", "agent")
// are dropped when other words remain.
func (x *Index) searchWords(q string) []queryWord {
	toks := x.analyzer.Analyze([]byte(q))
	var out []queryWord
	seen := map[string]bool{}
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j].Position == toks[i].Position {
			j++
		}
		t := toks[i]
		w := queryWord{}
		if t.Start >= 0 && t.End <= len(q) && t.Start < t.End {
			w.raw = strings.ToLower(string(fold([]byte(q[t.Start:t.End]))))
		}
		for _, p := range toks[i:j] {
			if term := string(p.Term); !slices.Contains(w.terms, term) {
				w.terms = append(w.terms, term)
			}
		}
		i = j
		key := strings.Join(w.terms, " ")
		if seen[key] {
			continue
		}
		seen[key] = true
		w.syns = x.synonyms.of(w)
		w.known = x.synonyms.knows(w)
		out = append(out, w)
		if len(out) == MaxQueryWords {
			break
		}
	}
	x.synonyms.addPhrases(out)
	kept := out[:0:0]
	for _, w := range out {
		if !fillerTerms[w.terms[0]] {
			kept = append(kept, w)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	return out
}

// fillerTerms are analyzed words that say "I am looking for an agent"
// rather than what for.
var fillerTerms = map[string]bool{"find": true, "agent": true, "search": true, "look": true,
	"need": true, "want": true, "pleas": true, "someth": true, "best": true, "tool": true,
	"help": true, "can": true, "i": true}

// minShould is how many query words an agent must contain: all of one or
// two words, one fewer of three or four, half of longer queries (a
// paraphrase of a skill shares its key words, not its wording).
func minShould(n int) int {
	switch {
	case n <= 2:
		return n
	case n <= 4:
		return n - 1
	default:
		return (n + 1) / 2
	}
}

// relaxedShould is how many of n query words the last try needs when
// neither the words as written nor near spellings found anything: half,
// rounded down, at least one ("will it storm this weekend" keeps "will",
// which is not a stop word). The page's matches show which words matched;
// the scores put the agents holding the rarer words first.
func relaxedShould(n int) int { return max(1, n/2) }

func termQ(field, value string, boost float64) *query.TermQuery {
	t := bleve.NewTermQuery(value)
	t.SetField(field)
	t.SetBoost(boost)
	return t
}

func term(field, value string) *query.TermQuery {
	return termQ(field, value, 0) // filters select, they do not score
}

// wordQuery matches one word in any text field: the word's terms at the
// field's boost, its synonyms lower. (Near spellings are the relevance
// pass's alone: typoTerms, standing.go.)
func wordQuery(w queryWord) query.Query {
	var qs []query.Query
	for _, f := range textFields {
		for _, t := range w.terms {
			qs = append(qs, termQ(f.field, t, f.boost))
		}
		for _, t := range w.syns {
			qs = append(qs, termQ(f.field, t, f.boost*boostSynonym))
		}
	}
	if w.raw != "" {
		qs = append(qs, termQ(fieldTags, w.raw, boostTag))
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// textQuery is the query of ws: at least minShould words, each anywhere in
// the agent; the phrase of q in the name or description scores more.
// Phrases cannot change which agents match (a phrase holds every word), so
// they sit in the same disjunction. Scores come from Bleve's TF-IDF with
// its coordination factor: more words, and words in more fields, score more.
func textQuery(q string, ws []queryWord) query.Query {
	qs := make([]query.Query, 0, len(ws)+2)
	for _, w := range ws {
		qs = append(qs, wordQuery(w))
	}
	if len(ws) > 1 {
		for _, p := range []struct {
			field string
			boost float64
		}{{fieldName, boostPhrase}, {fieldDescription, boostDescPhrase}} {
			m := bleve.NewMatchPhraseQuery(q)
			m.SetField(p.field)
			m.SetBoost(p.boost)
			qs = append(qs, m)
		}
	}
	d := bleve.NewDisjunctionQuery(qs...)
	d.SetMin(float64(minShould(len(ws))))
	return d
}

// scopeQuery restricts results to the scope's agents: one of its terms
// (registry.ListTerms, stored in listedBy); nil for a scope of every agent.
// The zero scope is the anonymous caller's.
func scopeQuery(scope registry.Scope) []query.Query {
	if scope.All {
		return nil
	}
	return []query.Query{anyTerm(fieldListedBy, scope.AnyOf()...)}
}

// anyTerm matches any of the values, without scoring.
func anyTerm(field string, values ...string) query.Query {
	if len(values) == 1 {
		return term(field, values[0])
	}
	qs := make([]query.Query, 0, len(values))
	for _, v := range values {
		qs = append(qs, term(field, v))
	}
	d := bleve.NewDisjunctionQuery(qs...)
	d.SetBoost(0)
	return d
}

// filterClause is one filter as index terms: the document must hold one
// of values in field.
type filterClause struct {
	field  string
	values []string
}

// filterClauses turns each non-empty filter into one clause, its values
// normalized like the indexed ones. The clauses are ANDed.
func filterClauses(f Filters) []filterClause {
	var out []filterClause
	for _, ff := range f.fields() {
		if len(ff.values) == 0 {
			continue
		}
		values := make([]string, 0, len(ff.values))
		for _, v := range ff.values {
			if ff.lower {
				v = strings.ToLower(strings.TrimSpace(v))
			}
			values = append(values, v)
		}
		out = append(out, filterClause{ff.field, values})
	}
	return out
}

// scopeClauses are the scope's clause followed by the filters' (the scope
// of every agent adds none).
func scopeClauses(scope registry.Scope, f Filters) []filterClause {
	var out []filterClause
	if !scope.All {
		out = append(out, filterClause{fieldListedBy, scope.AnyOf()})
	}
	return append(out, filterClauses(f)...)
}

// filterQueries turns each filter clause into one query: an OR of its
// values. The queries are ANDed by the caller.
func filterQueries(f Filters) []query.Query {
	var out []query.Query
	for _, c := range filterClauses(f) {
		out = append(out, anyTerm(c.field, c.values...))
	}
	return out
}

// buildQuery ANDs scope, filters and text (nil: every agent in scope).
func buildQuery(text query.Query, scope registry.Scope, f Filters) query.Query {
	must := scopeQuery(scope)
	must = append(must, filterQueries(f)...)
	if text != nil {
		must = append(must, text)
	}
	switch len(must) {
	case 0:
		return agentsOnly()
	case 1:
		return must[0]
	default:
		return bleve.NewConjunctionQuery(must...)
	}
}

// agentsOnly matches every document (each has the admin listing term).
func agentsOnly() query.Query {
	return term(fieldListedBy, registry.ListTermAll)
}
