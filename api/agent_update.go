package api

import (
	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type patchRequest struct {
	Visibility registry.Visibility `json:"visibility"`
}

// updateAgent is PATCH /api/v1/agents/{id} {"visibility": …} (admin).
func (s *server) updateAgent(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req patchRequest
	if err := decodeObject(body, raw, &req, "visibility"); err != nil {
		return err
	}
	if err := checkVisibility("/visibility", req.Visibility, false); err != nil {
		return err
	}
	a, err := s.svc.SetVisibility(c.Request().Context(), principal(c), c.Param("id"), req.Visibility)
	return writeAgentOK(c, a, err)
}
