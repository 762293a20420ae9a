package search

import (
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cardexhq/cardex/registry"
)

// Query-time boosts: a match in a name or skill name outranks a passing
// mention in a description; all words inside one skill outrank words
// scattered over several.
const (
	boostName        = 5.0
	boostNamePhrase  = 5.0
	boostDescription = 1.5
	boostDescPhrase  = 2.0
	boostProvider    = 1.5
	boostTag         = 2.0
	boostSkillName   = 3.0
	boostSkillDesc   = 1.0
	boostSkillTags   = 2.0
	boostSkillEx     = 0.5
	boostWithinSkill = 3.0
	boostGate        = 0.2
)

// skillTextFields are the nested skill fields user text is matched against.
var skillTextFields = []struct {
	field string
	boost float64
}{
	{fieldSkillName, boostSkillName},
	{fieldSkillDescription, boostSkillDesc},
	{fieldSkillTags, boostSkillTags},
	{fieldSkillExamples, boostSkillEx},
}

// words splits q into the words that survive the English analyzer (stop
// words dropped), as the original text of each, at most MaxQueryWords.
// Every word then goes into a Match query, which analyzes it per field:
// nothing in q is ever parsed as query syntax (G.71).
func words(an analysis.Analyzer, q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, tok := range an.Analyze([]byte(q)) {
		if tok.Start < 0 || tok.End > len(q) || tok.Start >= tok.End {
			continue
		}
		w := strings.ToLower(q[tok.Start:tok.End])
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == MaxQueryWords {
			break
		}
	}
	return out
}

// minShould is how many query words an agent must contain: all of one or
// two words, one fewer of three or four, 70% of longer queries.
func minShould(n int) int {
	switch {
	case n <= 2:
		return n
	case n <= 4:
		return n - 1
	default:
		return (n*7 + 9) / 10
	}
}

func match(field, text string, boost float64) *query.MatchQuery {
	m := bleve.NewMatchQuery(text)
	m.SetField(field)
	m.SetBoost(boost)
	return m
}

func phrase(field, text string, boost float64) *query.MatchPhraseQuery {
	m := bleve.NewMatchPhraseQuery(text)
	m.SetField(field)
	m.SetBoost(boost)
	return m
}

func term(field, value string) *query.TermQuery {
	t := bleve.NewTermQuery(value)
	t.SetField(field)
	t.SetBoost(0) // filters select, they do not score
	return t
}

// skillWord matches one word in any text field of a skill.
func skillWord(w string) query.Query {
	qs := make([]query.Query, 0, len(skillTextFields))
	for _, f := range skillTextFields {
		qs = append(qs, match(f.field, w, f.boost))
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// anySkillWords matches skills containing any of the words. Bleve scores
// a disjunction per nested skill with a coordination factor (matched
// clauses / all clauses), so a skill holding every word outscores the same
// words spread over several skills: "invoices finance" ranks the agent
// whose invoice skill is tagged finance first (see TestNestedWithinOneSkill)
// at the cost of one pass over the skill postings.
func anySkillWords(ws []string) query.Query {
	if len(ws) == 1 {
		return skillWord(ws[0])
	}
	qs := make([]query.Query, 0, len(ws))
	for _, w := range ws {
		qs = append(qs, skillWord(w))
	}
	d := bleve.NewDisjunctionQuery(qs...)
	d.SetBoost(boostWithinSkill)
	return d
}

// withinOneSkill matches skills that contain every word. Bleve evaluates a
// conjunction over nested fields inside one nested document, so "invoices
// finance" needs both words in the same skill.
func withinOneSkill(ws []string) query.Query {
	qs := make([]query.Query, 0, len(ws))
	for _, w := range ws {
		qs = append(qs, skillWord(w))
	}
	if len(qs) == 1 {
		return qs[0]
	}
	c := bleve.NewConjunctionQuery(qs...)
	c.SetBoost(boostWithinSkill)
	return c
}

// textQuery is a search for ws (the words of q). The gate requires enough
// words somewhere in the agent (the flat `text` field); should scores
// matches in names, descriptions, tags and skills.
type textQuery struct {
	gate   query.Query // agent-level fields only
	should query.Query // includes nested skill fields
}

func newTextQuery(q string, ws []string) *textQuery {
	gate := make([]query.Query, 0, len(ws))
	for _, w := range ws {
		gate = append(gate, match(fieldText, w, boostGate))
	}
	g := bleve.NewDisjunctionQuery(gate...)
	g.SetMin(float64(minShould(len(ws))))

	joined := strings.Join(ws, " ")
	should := []query.Query{
		match(fieldName, joined, boostName),
		match(fieldDescription, joined, boostDescription),
		match(fieldProvider, joined, boostProvider),
		anySkillWords(ws),
	}
	if len(ws) > 1 {
		should = append(should,
			phrase(fieldName, q, boostNamePhrase),
			phrase(fieldDescription, q, boostDescPhrase))
	}
	for _, w := range ws {
		t := bleve.NewTermQuery(w)
		t.SetField(fieldTags)
		t.SetBoost(boostTag)
		should = append(should, t)
	}
	return &textQuery{gate: g, should: bleve.NewDisjunctionQuery(should...)}
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

// filterQueries turns each non-empty filter into one clause: an OR of its
// values. The clauses are ANDed by the caller.
func filterQueries(f Filters) []query.Query {
	var out []query.Query
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
		out = append(out, anyTerm(ff.field, values...))
	}
	return out
}

// buildQuery combines scope, filters and text. Every agent-level clause
// goes into one conjunction, which Bleve runs with its plain conjunction
// searcher; only then is it ANDed with the clause that reaches into skills
// (the text's should part, or a skill query). A single conjunction mixing
// both would make Bleve walk every filter's postings with its nested
// conjunction searcher, several times slower on a large index.
//
// Every agent that passes the gate matches at least one should clause (the
// flat text is their union), so the final conjunction scores like "must +
// should". A BooleanQuery would read better, but Bleve v2.6.1 then drops the
// matched nested skills from the hit, and with them the skill highlights.
func buildQuery(text *textQuery, nested query.Query, scope registry.Scope, f Filters) query.Query {
	root := rootQuery(text, scope, f)
	if text != nil {
		nested = text.should
	}
	if nested == nil {
		return root
	}
	return bleve.NewConjunctionQuery(root, nested)
}

// rootQuery is the agent-level part of buildQuery: scope, filters and the
// text gate. With a text query it selects exactly the agents buildQuery
// selects (every gated agent matches a should clause), which is what lets
// Search count facets on it without the nested skill clauses
// (TestFacetQuerySelectsSameAgents).
func rootQuery(text *textQuery, scope registry.Scope, f Filters) query.Query {
	must := scopeQuery(scope)
	must = append(must, filterQueries(f)...)
	if text != nil {
		must = append(must, text.gate)
	}
	switch len(must) {
	case 0:
		// An agent always has a status; skills never do.
		return agentsOnly()
	case 1:
		return must[0]
	default:
		return bleve.NewConjunctionQuery(must...)
	}
}

// agentsOnly matches every agent document (never a nested skill).
func agentsOnly() query.Query {
	return term(fieldListedBy, registry.ListTermAll)
}
