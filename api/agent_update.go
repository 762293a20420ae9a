package api

import (
	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type patchRequest struct {
	Visibility registry.Visibility `json:"visibility"`
	Groups     []string            `json:"groups"`
}

// updateAgent is PATCH /api/v1/agents/{id} {"visibility": …, "groups": […]}
// (admin); groups come with visibility "groups" only (registry
// SetVisibility checks them).
func (s *server) updateAgent(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req patchRequest
	if err := decodeObject(body, raw, &req, "visibility", "groups"); err != nil {
		return err
	}
	switch req.Visibility {
	case registry.VisibilityPublic, registry.VisibilityInternal, registry.VisibilityGroups:
	case "":
		return fieldProblem("/visibility", "required", "visibility is required")
	default:
		return fieldProblem("/visibility", "enum", "visibility must be public, internal or groups")
	}
	a, err := s.svc.SetVisibility(c.Request().Context(), principal(c), c.Param("id"), req.Visibility, req.Groups...)
	return writeAgentOK(c, a, err)
}
