package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// listCatalogs is GET /api/v1/catalogs (admin): the AI Catalogs Cardex
// crawls, each with the trace of its last crawl (docs/discovery.md).
func (s *server) listCatalogs(c echo.Context) error {
	if err := checkParams(c.QueryParams()); err != nil {
		return err
	}
	list, err := s.svc.Catalogs(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"catalogs": list})
}
