package search

import (
	"context"
	"slices"

	"github.com/blevesearch/bleve/v2"

	"github.com/cardexhq/cardex/search/zapread"
)

// segmentSupported reports whether the text and facet tables can read a
// segment: it is of the format they were written for (zapread.Format).
// Tests replace it to force the fallback.
var segmentSupported = zapread.Segment.Supported

// searchRelevanceBleve is searchRelevance through Bleve's own searchers,
// for an index whose segments the text and facet tables cannot read (a
// segment format they were not written for, see texttable.go): the same
// query (textQuery: the same words, minimum of words and field boosts),
// scope and filters, so the same agents, total and facets; ordered by
// Bleve's score (no phrase or one-skill rerank), ties by id.
func (x *Index) searchRelevanceBleve(ctx context.Context, g *generation, q Query, ws []queryWord, offset, size int, typos bool) (*Result, error) {
	req := bleve.NewSearchRequestOptions(buildQuery(textQuery(q.Q, ws, typos), q.Scope, q.Filters), size, offset, false)
	req.SortBy([]string{"-_score", "_id"})
	req.IncludeLocations = true
	req.Fields = hitFields
	addFacets(req)
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
	out := &Result{TotalSize: int(res.Total), Facets: facetsOf(res), Hits: make([]Hit, 0, len(res.Hits))}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, hitFrom(h.ID, h.Score, detailOf(h, wordOf), true))
	}
	return out, nil
}
