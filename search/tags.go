package search

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/cardexhq/cardex/registry"
)

// Tags lists the tags of the agents in scope, with how many agents carry
// each, most used first; prefix (case-insensitive) narrows them for
// type-ahead. Counts come from a facet over the viewer's scope, never from
// the raw term dictionary, so a tag used only by hidden agents does not leak
// (G.72). limit defaults to 100 and is capped at 1,000.
func (x *Index) Tags(ctx context.Context, prefix string, scope registry.Scope, limit int) ([]FacetValue, error) {
	if len(prefix) > MaxFilterBytes {
		return nil, fmt.Errorf("%w: prefix too long", ErrInvalidQuery)
	}
	if err := validateText(prefix); err != nil {
		return nil, err
	}
	switch {
	case limit <= 0:
		limit = 100
	case limit > maxTagsListLimit:
		limit = maxTagsListLimit
	}
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	// The answer is cached per scope, prefix, limit and index epoch
	// (cache.go): counting every distinct tag of the scope is a facet over
	// all of them, tens of milliseconds when the cards carry tens of
	// thousands of tags (docs/threats.md K.96), and a write moves the epoch
	// on.
	_, epoch, err := x.acquireEpoch()
	if err != nil {
		return nil, err
	}
	key := cacheKey{kind: cacheFacets, epoch: epoch, query: queryKey("tags", prefix, scope, "", Filters{}), size: limit}
	v, hit := x.cache.get(key)
	x.mu.RUnlock()
	if hit {
		return slices.Clone(v.(Facets).Tags), nil
	}
	q := buildQuery(nil, scope, Filters{})
	if prefix != "" {
		p := bleve.NewPrefixQuery(prefix)
		p.SetField(fieldTags)
		p.SetBoost(0)
		q = bleve.NewConjunctionQuery(q, p)
	}
	req := bleve.NewSearchRequestOptions(q, 0, 0, false)
	req.Score = bleve.ScoreNone
	// Every distinct tag is counted by the facet builder anyway; a large
	// size only keeps rare prefix matches from being cut before filtering.
	req.AddFacet(fieldTags, bleve.NewFacetRequest(fieldTags, 100_000))
	res, err := x.run(ctx, req)
	if err != nil {
		return nil, err
	}
	all := facetsOf(res).Tags
	out := make([]FacetValue, 0, min(limit, len(all)))
	for _, t := range all {
		if strings.HasPrefix(t.Value, prefix) {
			out = append(out, t)
			if len(out) == limit {
				break
			}
		}
	}
	x.cache.put(key, Facets{Tags: slices.Clone(out)})
	return out, nil
}
