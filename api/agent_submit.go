package api

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type submitRequest struct {
	CardURL    *string             `json:"cardUrl"`
	Visibility registry.Visibility `json:"visibility"`
}

// submitAgent is POST /api/v1/agents: register a card URL; the crawler
// fetches the card later (docs/design.md principle 1: never card content from the
// submitter).
func (s *server) submitAgent(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req submitRequest
	if err := decodeObject(body, raw, &req, "cardUrl", "visibility"); err != nil {
		return err
	}
	if req.CardURL == nil {
		return fieldProblem("/cardUrl", "required", "cardUrl is required")
	}
	if err := checkVisibility("/visibility", req.Visibility, true); err != nil {
		return err
	}
	if err := s.limitSubmission(c, *req.CardURL); err != nil {
		return err
	}
	vis := req.Visibility
	if vis == "" {
		vis = registry.VisibilityPublic
	}
	a, err := s.svc.Submit(c.Request().Context(), principal(c), *req.CardURL, vis)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", s.baseURL+"/api/v1/agents/"+url.PathEscape(a.ID))
	s.kick() // fetch the new agent now, not at the crawler's next tick
	return writeAgent(c, http.StatusAccepted, a)
}

// checkVisibility validates an enum value from a body.
func checkVisibility(pointer string, v registry.Visibility, optional bool) error {
	switch v {
	case registry.VisibilityPublic, registry.VisibilityInternal:
		return nil
	case "":
		if optional {
			return nil
		}
		return fieldProblem(pointer, "required", "visibility is required")
	}
	return fieldProblem(pointer, "enum", "visibility must be public or internal")
}
