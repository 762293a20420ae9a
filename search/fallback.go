package search

import (
	"context"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

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
// Bleve's score (no phrase or one-skill rerank, no standing), ties by id.
// Its retries are coarser than the tables': a typo retry is Bleve's fuzzy
// match of each word the synonym lists do not know (typoTerms' rarity
// rule needs the tables' document frequencies), and a relaxed retry asks
// for half the words.
func (x *Index) searchRelevanceBleve(ctx context.Context, g *generation, q Query, ws []queryWord, offset, size int, typos, relax bool) (*Result, error) {
	req := bleve.NewSearchRequestOptions(buildQuery(fallbackTextQuery(q.Q, ws, typos, relax), q.Scope, q.Filters), size, offset, false)
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

// fallbackTextQuery is textQuery with searchRelevance's retry modes done
// by Bleve: fuzzy terms for typos, half the words when relaxed.
func fallbackTextQuery(q string, ws []queryWord, typos, relax bool) query.Query {
	if !typos && !relax {
		return textQuery(q, ws)
	}
	qs := make([]query.Query, 0, len(ws))
	for _, w := range ws {
		word := wordQuery(w)
		if typos && !w.known && len(w.terms[0]) >= minFuzzyWordBytes {
			alts := []query.Query{word}
			for _, f := range textFields {
				fq := bleve.NewFuzzyQuery(w.terms[0])
				fq.SetField(f.field)
				fq.SetBoost(f.boost * boostFuzzy)
				fq.SetFuzziness(1)
				if len(w.terms[0]) >= 8 {
					fq.SetFuzziness(2)
				}
				alts = append(alts, fq)
			}
			word = bleve.NewDisjunctionQuery(alts...)
		}
		qs = append(qs, word)
	}
	d := bleve.NewDisjunctionQuery(qs...)
	if relax {
		d.SetMin(float64(relaxedShould(len(ws))))
	} else {
		d.SetMin(float64(minShould(len(ws))))
	}
	return d
}
