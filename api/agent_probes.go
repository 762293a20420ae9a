package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/strictjson"
)

// Probe history page sizes (docs/liveness.md).
const (
	defaultProbes = 50
	maxProbes     = 500
)

// listProbes is GET /api/v1/agents/{id}/probes: the liveness probe
// history, newest first, paged, for whoever may read the agent.
func (s *server) listProbes(c echo.Context) error {
	if err := checkParams(c.QueryParams(), "limit", "pageToken"); err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultProbes, 1, maxProbes)
	if err != nil {
		return err
	}
	ps, next, err := s.svc.Probes(c.Request().Context(), principal(c), c.Param("id"), int(limit), c.QueryParam("pageToken"))
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []registry.Probe{}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"probes": ps, "nextPageToken": next})
}

type probingRequest struct {
	Enabled *bool `json:"enabled"`
}

// setProbing is PUT /api/v1/agents/{id}/probing {"enabled": bool} (admin):
// the per-agent off switch of liveness probes.
func (s *server) setProbing(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req probingRequest
	if err := decodeObject(body, raw, &req, "enabled"); err != nil {
		return err
	}
	if body == nil || body.Get("enabled") == nil || body.Get("enabled").Kind != strictjson.Bool {
		return fieldProblem("/enabled", "required", "enabled (true or false) is required")
	}
	a, err := s.svc.SetProbing(c.Request().Context(), principal(c), c.Param("id"), *req.Enabled)
	return writeAgentOK(c, a, err)
}
