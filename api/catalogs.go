package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// listCatalogs is GET /api/v1/catalogs (admin): the AI Catalogs Cardex
// crawls, each with its status, health, last error and the trace of its
// last crawl (docs/discovery.md "A catalog's lifecycle").
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

// catalogChange is POST /api/v1/catalogs/{id}/pause and /resume (admin):
// an optional empty JSON object as body; the catalog after the change.
func (s *server) catalogChange(change func(context.Context, registry.Principal, string) (*registry.Catalog, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := emptyBody(c); err != nil {
			return err
		}
		cat, err := change(c.Request().Context(), principal(c), c.Param("id"))
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, cat)
	}
}

// removeCatalog is DELETE /api/v1/catalogs/{id} (admin): the agents the
// catalog brought stay, with their provenance.
func (s *server) removeCatalog(c echo.Context) error {
	cat, err := s.svc.RemoveCatalog(c.Request().Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, cat)
}
