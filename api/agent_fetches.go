package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// Crawl trace sizes.
const (
	defaultFetches = 50
	maxFetches     = 200
)

// listFetches is GET /api/v1/agents/{id}/fetches (admin, or the owner's
// publisher token): the crawl trace, newest first.
func (s *server) listFetches(c echo.Context) error {
	if err := checkParams(c.QueryParams(), "limit"); err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultFetches, 1, maxFetches)
	if err != nil {
		return err
	}
	fs, err := s.svc.Fetches(c.Request().Context(), principal(c), c.Param("id"), int(limit))
	if err != nil {
		return err
	}
	if fs == nil {
		fs = []registry.FetchAttempt{}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"fetches": fs})
}
