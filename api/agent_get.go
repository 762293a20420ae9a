package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// getAgent is GET /api/v1/agents/{id}. Whoever holds an id may read the
// record (docs/api.md "Agent identity"); the Service decides what else is hidden.
func (s *server) getAgent(c echo.Context) error {
	a, err := s.svc.Get(c.Request().Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeAgent(c, http.StatusOK, a)
}
