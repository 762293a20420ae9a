package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// crawlAgent is POST /api/v1/agents/{id}/crawl {} (admin, or the owner's
// publisher token): fetch as soon as possible.
func (s *server) crawlAgent(c echo.Context) error {
	if err := emptyBody(c); err != nil {
		return err
	}
	if p := principal(c); p.Role == registry.RolePublisher {
		// A crawl is an outbound fetch: a publisher spends its budget.
		if err := s.limitToken(p); err != nil {
			return err
		}
	}
	a, err := s.svc.RequestCrawl(c.Request().Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	s.kick()
	return writeAgent(c, http.StatusAccepted, a)
}
