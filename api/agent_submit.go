package api

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/registry"
)

type submitRequest struct {
	CardURL    *string             `json:"cardUrl"`
	CatalogURL *string             `json:"catalogUrl"`
	Visibility registry.Visibility `json:"visibility"`
}

// submitAgent is POST /api/v1/agents: register a card URL; the crawler
// fetches the card later (docs/design.md principle 1: never card content from the
// submitter). A catalogUrl (or a cardUrl on the well-known catalog path)
// registers an AI Catalog instead, crawled at once (submitCatalog).
func (s *server) submitAgent(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req submitRequest
	if err := decodeObject(body, raw, &req, "cardUrl", "catalogUrl", "visibility"); err != nil {
		return err
	}
	switch {
	case req.CardURL != nil && req.CatalogURL != nil:
		return fieldProblem("/catalogUrl", "exclusive", "give cardUrl or catalogUrl, not both")
	case req.CatalogURL != nil:
		return s.submitCatalog(c, *req.CatalogURL, req.Visibility)
	case req.CardURL == nil:
		return fieldProblem("/cardUrl", "required", "cardUrl (or catalogUrl) is required")
	case aicatalog.NamesCatalog(*req.CardURL):
		return s.submitCatalog(c, *req.CardURL, req.Visibility)
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

// submitCatalog registers an AI Catalog and crawls it now (docs/discovery.md
// "Submitting a catalog"): 202 with the agents it registered and the trace
// of its entries. It spends the submission budget one unit per agent
// registered (at least one, for the fetch), the submitter's and the
// catalog's registrable domain's (catalogBudget). A catalog registered
// already is answered 200 as its last crawl left it, for nothing. The
// agents a catalog brings are public and pending, whoever submits it.
func (s *server) submitCatalog(c echo.Context, rawURL string, vis registry.Visibility) error {
	if vis != "" && vis != registry.VisibilityPublic {
		return fieldProblem("/visibility", "enum", "a catalog's agents are registered public; an admin changes an agent's visibility afterwards")
	}
	sub, err := s.svc.SubmitCatalog(c.Request().Context(), principal(c), rawURL, s.catalogBudget(c, rawURL))
	if err != nil {
		return err
	}
	if sub.Known {
		return writeJSON(c, http.StatusOK, struct {
			*registry.CatalogSubmission
			Agents []agentView `json:"agents"`
		}{sub, []agentView{}})
	}
	if len(sub.Agents) > 0 {
		s.kick()
	}
	agents := make([]agentView, len(sub.Agents))
	for i, a := range sub.Agents {
		agents[i] = agentJSON(a)
	}
	return writeJSON(c, http.StatusAccepted, struct {
		*registry.CatalogSubmission
		Agents []agentView `json:"agents"`
	}{sub, agents})
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
