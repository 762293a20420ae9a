package search

import (
	"context"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cardexhq/cardex/registry"
)

// SkillQuery is a search of skills (`GET /skills`): Q must match within one
// skill; Filters and Scope apply to the skill's agent.
type SkillQuery struct {
	Q         string
	Filters   Filters
	Scope     registry.Scope
	PageSize  int
	PageToken string
}

// SkillHit is one matching skill (CONTRACT.md §5 `/skills`).
type SkillHit struct {
	AgentID     string   `json:"agentId"`
	AgentName   string   `json:"agentName"`
	SkillID     string   `json:"skillId"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	// Fragments are the highlighted matches (HTML-escaped, <mark>), empty
	// when Q is empty.
	Fragments []string `json:"fragments"`
}

// SkillResult is one page of skills. TotalSize counts matching skills.
type SkillResult struct {
	Skills        []SkillHit `json:"skills"`
	NextPageToken string     `json:"nextPageToken"`
	TotalSize     int        `json:"totalSize"`
}

// skillQuery matches skill documents: all words within one skill (up to
// three words; longer questions need most of them), or every skill.
func skillQuery(ws []string) query.Query {
	switch {
	case len(ws) == 0:
		return term(fieldSkillMarker, skillMarkerValue)
	case len(ws) <= 3:
		return withinOneSkill(ws)
	default:
		qs := make([]query.Query, 0, len(ws))
		for _, w := range ws {
			qs = append(qs, skillWord(w))
		}
		d := bleve.NewDisjunctionQuery(qs...)
		d.SetMin(float64(minShould(len(ws))))
		return d
	}
}

// Skills returns skill-level hits, best agent first and, within an agent,
// its matching skills in card order. Paging walks agents with search-after
// and remembers how many skills of the next agent were already returned.
func (x *Index) Skills(ctx context.Context, q SkillQuery) (*SkillResult, error) {
	if err := validateText(q.Q); err != nil {
		return nil, err
	}
	if err := q.Filters.validate(); err != nil {
		return nil, err
	}
	ws := words(x.analyzer, q.Q)
	s := SortRelevance
	if len(ws) == 0 {
		s = SortName
	}
	order := sortOrder(s)
	key := queryKey("skills", q.Q, q.Scope, s, q.Filters)
	var tok pageToken
	if q.PageToken != "" {
		var err error
		if tok, err = decodeToken(q.PageToken, key, len(order)); err != nil {
			return nil, err
		}
	}
	size := min(clampPageSize(q.PageSize), MaxResultWindow-tok.Offset)

	// Every agent hit carries at least one matching skill, so size+1
	// agents always fill a page.
	req := bleve.NewSearchRequestOptions(buildQuery(nil, skillQuery(ws), q.Scope, q.Filters), size+1, 0, false)
	if len(ws) == 0 && strings.TrimSpace(q.Q) != "" {
		req.Query = bleve.NewMatchNoneQuery() // only stop words: see Search
	}
	if s != SortRelevance {
		req.Score = bleve.ScoreNone
	}
	req.SortByCustom(order)
	if tok.After != nil {
		req.SearchAfter = tok.After
	}
	req.Fields = []string{fieldName, fieldSkillID, fieldSkillName, fieldSkillDescription, fieldSkillTags}
	if len(ws) > 0 {
		req.Highlight = bleve.NewHighlightWithStyle(highlightStyle)
		req.Highlight.Fields = []string{fieldSkillName, fieldSkillDescription, fieldSkillTags, fieldSkillExamples}
	}
	// The facet counts matching skill documents, not agents.
	req.AddFacet(fieldSkillID, bleve.NewFacetRequest(fieldSkillID, 1))

	res, err := x.run(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &SkillResult{Skills: make([]SkillHit, 0, size)}
	if f, ok := res.Facets[fieldSkillID]; ok {
		out.TotalSize = f.Total
	}
	prev := tok.After
	for i, h := range res.Hits {
		skills := skillHitsOf(h)
		start := 0
		if i == 0 {
			start = tok.Skip
		}
		for j := start; j < len(skills); j++ {
			if len(out.Skills) == size {
				if n := tok.Offset + size; n < min(out.TotalSize, MaxResultWindow) {
					out.NextPageToken = encodeToken(pageToken{Key: key, After: prev, Offset: n, Skip: j})
				}
				return out, nil
			}
			out.Skills = append(out.Skills, skills[j])
		}
		prev = afterValues(order, h)
	}
	return out, nil
}

func skillHitsOf(h *search.DocumentMatch) []SkillHit {
	nested, _ := h.Fields[nestedDocumentFieldKey].([]*search.NestedDocumentMatch)
	out := make([]SkillHit, 0, len(nested))
	for _, nd := range nested {
		sh := SkillHit{
			AgentID:     h.ID,
			AgentName:   str(h.Fields[fieldName]),
			SkillID:     str(nd.Fields[fieldSkillID]),
			Name:        str(nd.Fields[fieldSkillName]),
			Description: str(nd.Fields[fieldSkillDescription]),
			Tags:        strs(nd.Fields[fieldSkillTags]),
			Fragments:   []string{},
		}
		for _, f := range []string{fieldSkillName, fieldSkillDescription, fieldSkillTags, fieldSkillExamples} {
			sh.Fragments = append(sh.Fragments, marked(nd.Fragments[f])...)
		}
		out = append(out, sh)
	}
	return out
}
