package search

import (
	"context"
	"math/bits"
	"slices"
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

// SkillHit is one matching skill (docs/api.md `/skills`).
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

// skillWordsQuery matches agents whose skills hold the words: every word
// for up to three words, minShould of longer questions. Whether they are
// in one skill is decided from the locations (skillsMatching).
func skillWordsQuery(ws []queryWord) query.Query {
	qs := make([]query.Query, 0, len(ws))
	for _, w := range ws {
		var fs []query.Query
		for _, f := range textFields {
			if !slices.Contains(skillFields, f.field) {
				continue
			}
			for _, t := range slices.Concat(w.terms, w.syns) {
				fs = append(fs, termQ(f.field, t, f.boost))
			}
		}
		qs = append(qs, bleve.NewDisjunctionQuery(fs...))
	}
	if len(ws) <= 3 {
		return bleve.NewConjunctionQuery(qs...)
	}
	d := bleve.NewDisjunctionQuery(qs...)
	d.SetMin(float64(skillWordsNeeded(len(ws))))
	return d
}

// skillWordsNeeded is how many of n query words one skill must hold.
func skillWordsNeeded(n int) int {
	if n <= 3 {
		return n
	}
	return minShould(n)
}

// wordIndex maps every analyzed term of ws (synonyms included) to its word.
func wordIndex(ws []queryWord) map[string]int {
	m := map[string]int{}
	for i, w := range ws {
		for _, t := range slices.Concat(w.terms, w.syns) {
			if _, ok := m[t]; !ok {
				m[t] = i
			}
		}
	}
	return m
}

// skillCounter is the pass's count of a match's skills that hold enough
// query words (skillsMatching's count): the words each skill holds are a
// bit mask in one map the pass reuses, since a page of 100 over cards of
// 200 matching skills counts 20,000 skills (docs/benchmarks.md "Cost of
// anonymous requests"). The pass calls it from one goroutine.
func skillCounter(wordOf map[string]int, need, words int) func(dm *search.DocumentMatch) int {
	if words > 64 {
		return func(dm *search.DocumentMatch) int { return len(skillsMatching(dm.FieldTermLocations, wordOf, need)) }
	}
	masks := map[uint64]uint64{}
	return func(dm *search.DocumentMatch) int {
		clear(masks)
		for _, l := range dm.FieldTermLocations {
			if len(l.Location.ArrayPositions) == 0 || !slices.Contains(skillFields, l.Field) {
				continue
			}
			if w, ok := wordOf[l.Term]; ok {
				masks[l.Location.ArrayPositions[0]] |= 1 << w
			}
		}
		n := 0
		for _, m := range masks {
			if bits.OnesCount64(m) >= need {
				n++
			}
		}
		return n
	}
}

// skillsMatching returns the indexes of the skills of a match (term
// vectors on) that hold enough query words.
func skillsMatching(ftls []search.FieldTermLocation, wordOf map[string]int, need int) []int {
	words := map[uint64]map[int]bool{}
	for _, l := range ftls {
		if !slices.Contains(skillFields, l.Field) || len(l.Location.ArrayPositions) == 0 {
			continue
		}
		w, ok := wordOf[l.Term]
		if !ok {
			continue
		}
		i := l.Location.ArrayPositions[0]
		if words[i] == nil {
			words[i] = map[int]bool{}
		}
		words[i][w] = true
	}
	var out []int
	for i, ws := range words {
		if len(ws) >= need {
			out = append(out, int(i))
		}
	}
	slices.Sort(out)
	return out
}

// Skills returns skill-level hits, best agent first and, within an agent,
// its matching skills in card order. With words, one pass over the agents
// whose skills hold them counts the skills that hold them within one skill
// (the total) and keeps the best agents; pages are cut by offset. Without
// words, every skill of the agents in scope, agents by name, paged with
// search-after plus how many skills of the next agent were returned.
func (x *Index) Skills(ctx context.Context, q SkillQuery) (*SkillResult, error) {
	if err := validateText(q.Q); err != nil {
		return nil, err
	}
	if err := q.Filters.validate(); err != nil {
		return nil, err
	}
	ws := x.searchWords(q.Q)
	s := SortRelevance
	if len(ws) == 0 {
		s = SortName
	}
	order := sortOrder(s)
	key := queryKey("skills", q.Q, q.Scope, s, q.Filters)
	var tok pageToken
	if q.PageToken != "" {
		sortLen := len(order)
		if len(ws) > 0 {
			sortLen = 0
		}
		var err error
		if tok, err = decodeToken(q.PageToken, key, sortLen); err != nil {
			return nil, err
		}
	}
	size := min(clampPageSize(q.PageSize), MaxResultWindow-tok.Offset)
	ctx, cancel := context.WithTimeout(ctx, x.opts.QueryTimeout)
	defer cancel()
	if err := x.gate.enter(ctx); err != nil {
		return nil, x.mapErr(ctx, err)
	}
	defer x.gate.leave()
	g, err := x.acquire()
	if err != nil {
		return nil, err
	}
	defer x.mu.RUnlock()
	var out *SkillResult
	switch {
	case len(ws) > 0:
		out, err = x.skillsByRelevance(ctx, g, q, ws, key, tok.Offset, size)
	case strings.TrimSpace(q.Q) != "":
		out = &SkillResult{Skills: []SkillHit{}} // only stop words: see Search
	default:
		out, err = x.allSkills(ctx, g, q, order, key, tok, size)
	}
	if err != nil {
		return nil, x.mapErr(ctx, err)
	}
	return out, nil
}

func (x *Index) skillsByRelevance(ctx context.Context, g *generation, q SkillQuery, ws []queryWord, key string, offset, size int) (*SkillResult, error) {
	text := skillWordsQuery(ws)
	wordOf := wordIndex(ws)
	need := skillWordsNeeded(len(ws))
	// Every agent kept holds at least one matching skill, so offset+size
	// agents always reach the page's end.
	p, err := g.facets.pass(ctx, g, buildQuery(text, q.Scope, q.Filters), passOptions{k: offset + size,
		skills: skillCounter(wordOf, need, len(ws))})
	if err != nil {
		return nil, err
	}
	out := &SkillResult{Skills: make([]SkillHit, 0, size), TotalSize: p.total}
	// Find the agents of the page: skip offset skills.
	var page []scoredDoc
	skip, seen := 0, 0
	for _, d := range p.top {
		if seen+d.skills <= offset {
			seen += d.skills
			continue
		}
		if len(page) == 0 {
			skip = offset - seen
		}
		page = append(page, d)
		if seen += d.skills; seen >= offset+size {
			break
		}
	}
	if len(page) == 0 {
		return out, nil
	}
	details, err := x.details(ctx, g, text, page, ws)
	if err != nil {
		return nil, err
	}
	for i, d := range page {
		det, ok := details[d.id]
		if !ok {
			continue
		}
		var idx []int
		for skill, words := range det.words {
			if bits.OnesCount32(words) >= need {
				idx = append(idx, skill)
			}
		}
		slices.Sort(idx)
		if i == 0 {
			idx = idx[min(skip, len(idx)):]
		}
		for _, si := range idx {
			if len(out.Skills) == size {
				break
			}
			out.Skills = append(out.Skills, skillHit(d.id, det, si, true))
		}
	}
	if n := offset + size; len(out.Skills) == size && n < min(out.TotalSize, MaxResultWindow) {
		out.NextPageToken = encodeToken(pageToken{Key: key, Offset: n})
	}
	return out, nil
}

func (x *Index) allSkills(ctx context.Context, g *generation, q SkillQuery, order search.SortOrder, key string, tok pageToken, size int) (*SkillResult, error) {
	// Every agent with skills fills at least one slot, so size+1 agents
	// always fill a page.
	fq := bleve.NewConjunctionQuery(buildQuery(nil, q.Scope, q.Filters), hasSkills())
	req := bleve.NewSearchRequestOptions(fq, size+1, 0, false)
	req.Score = bleve.ScoreNone
	req.SortByCustom(order)
	if tok.After != nil {
		req.SearchAfter = tok.After
	}
	req.Fields = hitFields
	// The facet's total counts skill ids over the agents: the skills.
	req.AddFacet(fieldSkillIDs, bleve.NewFacetRequest(fieldSkillIDs, 1))
	res, err := x.runOn(ctx, g, req)
	if err != nil {
		return nil, err
	}
	out := &SkillResult{Skills: make([]SkillHit, 0, size)}
	if f, ok := res.Facets[fieldSkillIDs]; ok {
		out.TotalSize = f.Total
	}
	prev := tok.After
	for i, h := range res.Hits {
		det := detailOf(h, nil)
		start := 0
		if i == 0 {
			start = tok.Skip
		}
		for j := start; j < len(det.skills); j++ {
			if len(out.Skills) == size {
				if n := tok.Offset + size; n < min(out.TotalSize, MaxResultWindow) {
					out.NextPageToken = encodeToken(pageToken{Key: key, After: prev, Offset: n, Skip: j})
				}
				return out, nil
			}
			out.Skills = append(out.Skills, skillHit(h.ID, det, j, false))
		}
		prev = afterValues(order, h)
	}
	return out, nil
}

// hasSkills matches agents with at least one skill id.
func hasSkills() query.Query {
	q := bleve.NewWildcardQuery("*")
	q.SetField(fieldSkillIDs)
	q.SetBoost(0)
	return q
}

func skillHit(agentID string, d hitDetail, i int, highlight bool) SkillHit {
	s := d.skills[i]
	h := SkillHit{AgentID: agentID, AgentName: d.stored.name, SkillID: s.ID, Name: s.Name,
		Description: s.Description, Tags: nonNil(s.Tags), Fragments: []string{}}
	if highlight {
		h.Fragments = d.skillFragments(i)
	}
	return h
}
