package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cardexhq/cardex/registry"
)

// ErrTimeout is a query that ran past Options.QueryTimeout (G.71).
var ErrTimeout = errors.New("search: query timed out")

// Result is one page of agents. The ids are what counts: callers hydrate
// them from SQL and re-check visibility (G.72); the stored fields let a
// caller render a hit without that when it wants to.
type Result struct {
	Hits          []Hit  `json:"agents"`
	TotalSize     int    `json:"totalSize"`
	Facets        Facets `json:"facets"`
	NextPageToken string `json:"nextPageToken"`
}

// Hit is one agent of a Result.
type Hit struct {
	ID          string         `json:"id"`
	Score       float64        `json:"score"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Provider    string         `json:"provider"`
	Host        string         `json:"host"`
	Trust       registry.Trust `json:"trust"`
	// Matches say why the agent matched q: SkillID is "" for the agent's
	// own fields (name, description, provider, and MatchQueries: the
	// representativeQueries of its catalog entry, one fragment per
	// matching query), else the skill whose field (name, description,
	// tags, examples) matched.
	Matches []Match `json:"matches,omitempty"`
}

// MatchQueries is the Match.Field of a match in the representativeQueries
// of the catalog entry that lists the agent.
const MatchQueries = "representativeQueries"

// Match is one field that matched, with highlighted fragments: HTML-escaped
// text with the matching words in <mark>…</mark>, safe to insert as HTML.
type Match struct {
	SkillID   string   `json:"skillId"`
	Field     string   `json:"field"`
	Fragments []string `json:"fragments"`
}

// Search runs q and returns one page of agents with facets over all
// matching agents.
//
// A query with words, ordered by relevance, is one pass over the postings
// of its terms in the segments' text tables (texttable.go, rank.go) that
// counts the total and the facets and keeps the best agents by
// field-boosted score; the first rerankWindow of those gain the phrase and
// one-skill bonuses (oneSkillBonus), and only the page's hits are read
// from the stored fields and highlighted. Other orders
// let Bleve sort the page while the facet tables count the same query
// beside it.
//
// Whole pages and facet sets are cached per query and index epoch
// (cache.go), so repeated popular queries and later pages of a sorted
// listing cost a lookup.
func (x *Index) Search(ctx context.Context, q Query) (*Result, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	s := q.sort()
	order := sortOrder(s)
	key := queryKey("agents", q.Q, q.Scope, s, q.Filters)
	ws := x.searchWords(q.Q)
	byOffset := s == SortRelevance && len(ws) > 0
	var tok pageToken
	if q.PageToken != "" {
		sortLen := len(order)
		if byOffset {
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
	if r, ok, err := x.cachedPage(key, q.PageToken, size); err != nil || ok {
		return r, err
	}
	if err := x.gate.enter(ctx); err != nil {
		return nil, x.mapErr(ctx, err)
	}
	defer x.gate.leave()
	g, epoch, err := x.acquireEpoch()
	if err != nil {
		return nil, err
	}
	defer x.mu.RUnlock()
	pageKey := cacheKey{kind: cachePage, epoch: epoch, query: key, token: q.PageToken, size: size}
	if v, ok := x.cache.get(pageKey); ok {
		return cloneResult(v.(*Result)), nil // computed while this one waited
	}

	var out *Result
	switch {
	case byOffset:
		out, err = x.searchRelevance(ctx, g, q, ws, tok.Offset, size)
		if err == nil && out.TotalSize == 0 {
			// Nothing found: try again allowing a typo in longer words.
			out, err = x.searchRelevance(ctx, g, q, ws, tok.Offset, size, withTypos)
		}
		if err == nil && out.TotalSize > tok.Offset+len(out.Hits) && len(out.Hits) == size && tok.Offset+size < MaxResultWindow {
			out.NextPageToken = encodeToken(pageToken{Key: key, Offset: tok.Offset + size})
		}
	default:
		var text query.Query
		if strings.TrimSpace(q.Q) != "" && len(ws) == 0 {
			// q had only stop words or punctuation ("the", "/.*a/"): it
			// names nothing, so it matches nothing rather than everything.
			text = bleve.NewMatchNoneQuery()
		} else if len(ws) > 0 {
			text = textQuery(q.Q, ws, false)
		}
		facetKey := cacheKey{kind: cacheFacets, epoch: epoch, query: queryKey("agents", q.Q, q.Scope, "", q.Filters)}
		out, err = x.searchSorted(ctx, g, buildQuery(text, q.Scope, q.Filters), order, tok, key, size, facetKey)
	}
	if err != nil {
		return nil, x.mapErr(ctx, err)
	}
	x.cache.put(pageKey, cloneResult(out))
	return out, nil
}

// cachedPage answers from the cache without waiting for a query slot.
func (x *Index) cachedPage(key, token string, size int) (*Result, bool, error) {
	_, epoch, err := x.acquireEpoch()
	if err != nil {
		return nil, false, err
	}
	defer x.mu.RUnlock()
	if v, ok := x.cache.get(cacheKey{kind: cachePage, epoch: epoch, query: key, token: token, size: size}); ok {
		return cloneResult(v.(*Result)), true, nil
	}
	return nil, false, nil
}

// withTypos is searchRelevance's retry mode.
const withTypos = true

// rerankWindow is how many of the best agents gain the phrase and
// one-skill bonuses (rank.go); oneSkillBonus is how much an agent whose
// skill holds every query word gains (a skill with some of them gains in
// proportion).
const (
	rerankWindow  = 100
	oneSkillBonus = 0.5
)

func (x *Index) searchRelevance(ctx context.Context, g *generation, q Query, ws []queryWord, offset, size int, fuzzy ...bool) (*Result, error) {
	typos := len(fuzzy) > 0 && fuzzy[0]
	rq := rankQuery{words: ws, typos: typos, clauses: scopeClauses(q.Scope, q.Filters), k: max(offset+size, rerankWindow), runs: x.runs}
	rq.page.from, rq.page.to = offset, offset+size
	if len(ws) > 1 && !typos {
		rq.phrase = x.phraseOf(q.Q)
	}
	p, err := g.facets.rank(ctx, g, rq)
	if errors.Is(err, errNoTextTable) || errors.Is(err, errNoFacetTable) {
		// A segment the tables cannot read: Bleve's searchers answer
		// (fallback.go).
		return x.searchRelevanceBleve(ctx, g, q, ws, offset, size, typos)
	}
	if err != nil {
		return nil, err
	}
	out := &Result{TotalSize: p.total, Facets: p.facets, Hits: []Hit{}}
	if offset >= len(p.top) {
		return out, nil
	}
	for i, h := range p.top[offset:min(len(p.top), offset+size)] {
		out.Hits = append(out.Hits, hitFrom(h.id, h.score, p.details[i], true))
	}
	return out, nil
}

// details reads docs with the term locations of text and the fields a hit
// shows, keyed by id.
func (x *Index) details(ctx context.Context, g *generation, text query.Query, docs []scoredDoc, ws []queryWord) (map[string]hitDetail, error) {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.id
	}
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(bleve.NewDocIDQuery(ids), text), len(ids), 0, false)
	req.IncludeLocations = true
	req.Fields = hitFields
	res, err := x.runOn(ctx, g, req)
	if err != nil {
		return nil, err
	}
	wordOf := map[string]int{}
	for i, w := range ws {
		for _, t := range slices.Concat(w.terms, w.syns) {
			if _, ok := wordOf[t]; !ok {
				wordOf[t] = i
			}
		}
	}
	out := make(map[string]hitDetail, len(res.Hits))
	for _, h := range res.Hits {
		out[h.ID] = detailOf(h, wordOf)
	}
	return out, nil
}

// searchSorted is a page in a field order (or every agent in scope): Bleve
// sorts the page; the facets come from the facet tables over the same
// query, beside it.
func (x *Index) searchSorted(ctx context.Context, g *generation, fq query.Query, order search.SortOrder, tok pageToken, key string, size int, facetKey cacheKey) (*Result, error) {
	req := bleve.NewSearchRequestOptions(fq, size, 0, false)
	req.Score = bleve.ScoreNone
	req.SortByCustom(order)
	if tok.After != nil {
		req.SearchAfter = tok.After
	}
	req.Fields = hitFields
	var facets Facets
	var facetErr error
	var wg sync.WaitGroup
	if v, ok := x.cache.get(facetKey); ok {
		facets = cloneFacets(v.(Facets))
	} else {
		wg.Go(func() {
			facets, facetErr = x.facets(ctx, g, fq)
			if facetErr == nil {
				x.cache.put(facetKey, cloneFacets(facets))
			}
		})
	}
	res, err := x.runOn(ctx, g, req)
	wg.Wait()
	if err = cmp.Or(err, facetErr); err != nil {
		return nil, err
	}
	out := &Result{TotalSize: int(res.Total), Facets: facets, Hits: make([]Hit, 0, len(res.Hits))}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, hitFrom(h.ID, h.Score, detailOf(h, nil), false))
	}
	next := tok.Offset + len(res.Hits)
	if len(res.Hits) == size && next < min(int(res.Total), MaxResultWindow) {
		last := res.Hits[len(res.Hits)-1]
		out.NextPageToken = encodeToken(pageToken{Key: key, After: afterValues(order, last), Offset: next})
	}
	return out, nil
}

// mapErr turns a deadline into ErrTimeout.
func (x *Index) mapErr(ctx context.Context, err error) error {
	if errors.Is(err, ErrTimeout) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%w after %s", ErrTimeout, x.opts.QueryTimeout)
	}
	if errors.Is(err, errNoFacetTable) || strings.HasPrefix(err.Error(), "search:") {
		return err
	}
	return fmt.Errorf("search: %w", err)
}

// facets counts the facets over the agents matching fq, from the
// generation's facet tables (facettable.go) or, where those cannot be read,
// with a Bleve facet request.
func (x *Index) facets(ctx context.Context, g *generation, fq query.Query) (Facets, error) {
	p, err := g.facets.pass(ctx, g, fq, passOptions{facets: true})
	switch {
	case err == nil:
		return p.facets, nil
	case ctx.Err() == context.DeadlineExceeded:
		return Facets{}, fmt.Errorf("%w after %s", ErrTimeout, x.opts.QueryTimeout)
	case !errors.Is(err, errNoFacetTable):
		return Facets{}, fmt.Errorf("search: facets: %w", err)
	}
	req := bleve.NewSearchRequestOptions(fq, 0, 0, false)
	req.Score = bleve.ScoreNone
	addFacets(req)
	res, err := x.runOn(ctx, g, req)
	if err != nil {
		return Facets{}, err
	}
	return facetsOf(res), nil
}

// run executes req on the live generation with the query timeout.
func (x *Index) run(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	g, err := x.acquire()
	if err != nil {
		return nil, err
	}
	defer x.mu.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, x.opts.QueryTimeout)
	defer cancel()
	return x.runOn(ctx, g, req)
}

// runOn executes req on g; ctx carries the query timeout.
func (x *Index) runOn(ctx context.Context, g *generation, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	res, err := g.idx.SearchInContext(ctx, req)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err != nil && ctx.Err() == context.DeadlineExceeded):
		return nil, fmt.Errorf("%w after %s", ErrTimeout, x.opts.QueryTimeout)
	case err != nil:
		return nil, fmt.Errorf("search: %w", err)
	}
	return res, nil
}

var (
	hitFields = []string{fieldName, fieldDescription, fieldProvider, fieldHost, fieldTrust, fieldSkillsStored, fieldQueriesStored}
)

// sortOrder always ends with the id, so equal keys still page stably.
func sortOrder(s Sort) search.SortOrder {
	switch s {
	case SortName:
		return search.SortOrder{
			&search.SortField{Field: fieldNameSort, Type: search.SortFieldAsString, Missing: search.SortFieldMissingLast},
			&search.SortDocID{},
		}
	case SortTrust:
		return search.SortOrder{
			&search.SortField{Field: fieldOrder, Type: search.SortFieldAsString, Missing: search.SortFieldMissingLast},
			&search.SortField{Field: fieldUpdatedAt, Type: search.SortFieldAsNumber, Desc: true, Missing: search.SortFieldMissingLast},
			&search.SortDocID{},
		}
	case SortUpdated:
		return search.SortOrder{
			&search.SortField{Field: fieldUpdatedAt, Type: search.SortFieldAsNumber, Desc: true, Missing: search.SortFieldMissingLast},
			&search.SortDocID{},
		}
	default:
		return search.SortOrder{&search.SortScore{Desc: true}, &search.SortDocID{}}
	}
}

// afterValues are the search-after values of hit: decoded sort values, and
// the exact score where the order uses it.
func afterValues(order search.SortOrder, h *search.DocumentMatch) []string {
	out := make([]string, len(order))
	for i, so := range order {
		switch {
		case so.RequiresScoring():
			out[i] = strconv.FormatFloat(h.Score, 'g', -1, 64)
		case i < len(h.DecodedSort):
			out[i] = h.DecodedSort[i]
		}
	}
	return out
}

func hitFrom(id string, score float64, d hitDetail, withMatches bool) Hit {
	h := Hit{
		ID:          id,
		Score:       score,
		Name:        d.stored.name,
		Description: d.stored.description,
		Provider:    d.stored.provider,
		Host:        d.stored.host,
		Trust:       registry.Trust(d.stored.trust),
	}
	if withMatches {
		h.Matches = d.matches()
	}
	return h
}

// str reads a stored field that holds one string (Bleve returns a slice for
// a field indexed several times).
func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		if len(t) > 0 {
			s, _ := t[0].(string)
			return s
		}
	}
	return ""
}
