package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Tag list sizes: enough for a type-ahead or a tag cloud, bounded (I.82).
const (
	defaultTagLimit = 100
	maxTagLimit     = 1000
)

// listTags is GET /api/v1/tags?prefix=&limit=: the tags of the agents the
// caller may list, most used first, with how many agents carry each
// (docs/api.md). Counts come from the index over the caller's scope, so
// a tag only hidden agents carry is not shown (G.72).
func (s *server) listTags(c echo.Context) error {
	if s.search == nil {
		return errNoSearch()
	}
	qv := c.QueryParams()
	if err := checkParams(qv, "prefix", "limit"); err != nil {
		return err
	}
	prefix, err := queryText(qv, "prefix")
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultTagLimit, 1, maxTagLimit)
	if err != nil {
		return err
	}
	tags, err := s.search.Tags(c.Request().Context(), prefix, registry.ScopeOf(principal(c)), int(limit))
	if err != nil {
		return err
	}
	if tags == nil {
		tags = []search.FacetValue{}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"tags": tags})
}
