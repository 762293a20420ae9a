package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
	// own fields (name, description, provider), else the skill whose field
	// (name, description, tags, examples) matched.
	Matches []Match `json:"matches,omitempty"`
}

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
// The facets are the same for every page of a query, so they are computed
// once per query and index epoch and cached (cache.go); so are whole pages,
// which repeated popular queries hit. When they must be computed, they come
// from a second request running beside the one for the page: it has only
// the agent-level clauses (scope, filters, the text gate), which select
// exactly the agents the full query selects (see buildQuery), so Bleve
// counts them with its plain collector instead of the nested one, and the
// page request carries no facet work.
func (x *Index) Search(ctx context.Context, q Query) (*Result, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	s := q.sort()
	order := sortOrder(s)
	key := queryKey("agents", q.Q, q.Scope, s, q.Filters)
	var tok pageToken
	if q.PageToken != "" {
		var err error
		if tok, err = decodeToken(q.PageToken, key, len(order)); err != nil {
			return nil, err
		}
	}
	size := min(clampPageSize(q.PageSize), MaxResultWindow-tok.Offset)

	g, epoch, err := x.acquireEpoch()
	if err != nil {
		return nil, err
	}
	defer x.mu.RUnlock()
	pageKey := cacheKey{kind: cachePage, epoch: epoch, query: key, token: q.PageToken, size: size}
	if v, ok := x.cache.get(pageKey); ok {
		return cloneResult(v.(*Result)), nil
	}
	// Facets do not depend on the sort: one entry serves every order.
	facetKey := cacheKey{kind: cacheFacets, epoch: epoch, query: queryKey("agents", q.Q, q.Scope, "", q.Filters)}

	ws := words(x.analyzer, q.Q)
	req := bleve.NewSearchRequestOptions(nil, size, 0, false)
	var facetQuery query.Query
	if len(ws) > 0 {
		text := newTextQuery(q.Q, ws)
		req.Query = buildQuery(text, nil, q.Scope, q.Filters)
		facetQuery = rootQuery(text, q.Scope, q.Filters)
		req.Highlight = bleve.NewHighlightWithStyle(highlightStyle)
		req.Highlight.Fields = highlightFields
	} else if strings.TrimSpace(q.Q) != "" {
		// q had only stop words or punctuation ("the", "/.*a/"): it names
		// nothing, so it matches nothing rather than everything.
		req.Query = bleve.NewMatchNoneQuery()
		facetQuery = req.Query
	} else {
		req.Query = buildQuery(nil, nil, q.Scope, q.Filters)
		facetQuery = req.Query
	}
	if s != SortRelevance {
		req.Score = bleve.ScoreNone
	}
	req.SortByCustom(order)
	if tok.After != nil {
		req.SearchAfter = tok.After
	}
	req.Fields = hitFields

	ctx, cancel := context.WithTimeout(ctx, x.opts.QueryTimeout)
	defer cancel()
	var facets Facets
	var facetErr error
	var wg sync.WaitGroup
	if v, ok := x.cache.get(facetKey); ok {
		facets = cloneFacets(v.(Facets))
	} else {
		wg.Go(func() {
			facets, facetErr = x.facets(ctx, g, facetQuery)
		})
	}
	res, err := x.runOn(ctx, g, req)
	wg.Wait()
	if err = cmp.Or(err, facetErr); err != nil {
		return nil, err
	}
	if facetErr == nil {
		x.cache.put(facetKey, cloneFacets(facets))
	}
	out := &Result{TotalSize: int(res.Total), Facets: facets, Hits: make([]Hit, 0, len(res.Hits))}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, hitOf(h))
	}
	next := tok.Offset + len(res.Hits)
	if len(res.Hits) == size && next < min(int(res.Total), MaxResultWindow) {
		last := res.Hits[len(res.Hits)-1]
		out.NextPageToken = encodeToken(pageToken{Key: key, After: afterValues(order, last), Offset: next})
	}
	x.cache.put(pageKey, cloneResult(out))
	return out, nil
}

// facets counts the nine facets over the agents matching fq, from the
// generation's facet tables (facettable.go) or, where those cannot be read,
// with a Bleve facet request.
func (x *Index) facets(ctx context.Context, g *generation, fq query.Query) (Facets, error) {
	f, err := g.facets.count(ctx, g, fq)
	switch {
	case err == nil:
		return f, nil
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
	hitFields       = []string{fieldName, fieldDescription, fieldProvider, fieldHost, fieldTrust, fieldSkillID}
	highlightFields = []string{fieldName, fieldDescription, fieldProvider,
		fieldSkillName, fieldSkillDescription, fieldSkillTags, fieldSkillExamples}
)

// sortOrder always ends with the id, so equal keys still page stably.
func sortOrder(s Sort) search.SortOrder {
	switch s {
	case SortName:
		return search.SortOrder{
			&search.SortField{Field: fieldNameSort, Type: search.SortFieldAsString, Missing: search.SortFieldMissingLast},
			&search.SortDocID{},
		}
	case SortUpdated:
		return search.SortOrder{
			&search.SortField{Field: fieldUpdatedAt, Type: search.SortFieldAsNumber, Desc: true, Missing: search.SortFieldMissingLast},
			&search.SortDocID{},
		}
	case SortTrust:
		return search.SortOrder{
			&search.SortField{Field: fieldTrust, Type: search.SortFieldAsString, Desc: true, Missing: search.SortFieldMissingLast},
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

func hitOf(h *search.DocumentMatch) Hit {
	return Hit{
		ID:          h.ID,
		Score:       h.Score,
		Name:        str(h.Fields[fieldName]),
		Description: str(h.Fields[fieldDescription]),
		Provider:    str(h.Fields[fieldProvider]),
		Host:        str(h.Fields[fieldHost]),
		Trust:       registry.Trust(str(h.Fields[fieldTrust])),
		Matches:     matchesOf(h),
	}
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

func strs(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
