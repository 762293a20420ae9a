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

// textQuery is the scoring part of a search for ws (the words of q). It
// requires enough words somewhere in the agent (the flat `text` field) and
// adds score for matches in names, descriptions, tags and skills.
func textQuery(q string, ws []string) query.Query {
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
		withinOneSkill(ws),
	}
	if len(ws) > 1 {
		should = append(should,
			phrase(fieldName, q, boostNamePhrase),
			phrase(fieldDescription, q, boostDescPhrase))
		for _, w := range ws {
			should = append(should, skillWord(w))
		}
	}
	for _, w := range ws {
		t := bleve.NewTermQuery(w)
		t.SetField(fieldTags)
		t.SetBoost(boostTag)
		should = append(should, t)
	}
	// Every agent that passes the gate matches at least one of these
	// fields (the flat text is their union), so a conjunction with a
	// disjunction scores like "must + should". A BooleanQuery would do the
	// same but Bleve v2.6.1 then drops the matched nested skills from the
	// hit, and with them the skill highlights.
	return bleve.NewConjunctionQuery(g, bleve.NewDisjunctionQuery(should...))
}

// scopeQuery restricts results to what v may list (CONTRACT.md §4); nil
// for admins. "Not gone" is spelled as the other health values so that the
// whole query stays a conjunction (see textQuery).
func scopeQuery(v Viewer) []query.Query {
	notGone := anyTerm(fieldHealth, string(registry.HealthUnknown), string(registry.HealthOK), string(registry.HealthFailing))
	switch v {
	case ViewerAdmin:
		return nil
	case ViewerReader:
		return []query.Query{term(fieldStatus, string(registry.StatusApproved)), notGone}
	default:
		return []query.Query{
			term(fieldStatus, string(registry.StatusApproved)),
			term(fieldVisibility, string(registry.VisibilityPublic)),
			notGone,
		}
	}
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

// buildQuery combines text, scope and filters. With no text and no
// restriction it matches every agent (and no skill documents: agents are
// what is listed).
func buildQuery(text query.Query, v Viewer, f Filters) query.Query {
	must := scopeQuery(v)
	must = append(must, filterQueries(f)...)
	if text != nil {
		must = append(must, text)
	}
	if len(must) == 0 {
		// An agent always has a status; skills never do.
		must = append(must, agentsOnly())
	}
	if len(must) == 1 {
		return must[0]
	}
	return bleve.NewConjunctionQuery(must...)
}

// agentsOnly matches every agent document.
func agentsOnly() query.Query {
	return anyTerm(fieldStatus, string(registry.StatusPending), string(registry.StatusApproved),
		string(registry.StatusRejected), string(registry.StatusSuspended), string(registry.StatusRemoved))
}
