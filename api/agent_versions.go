package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// listVersions is GET /api/v1/agents/{id}/versions.
func (s *server) listVersions(c echo.Context) error {
	vs, err := s.svc.Versions(c.Request().Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	out := make([]registry.Version, 0, len(vs))
	for _, v := range vs {
		out = append(out, versionJSON(v))
	}
	return writeJSON(c, http.StatusOK, map[string]any{"versions": out})
}

// versionWithCard is one version with its raw card as a JSON value. The
// bytes were strictly parsed when fetched, so they are one valid JSON value;
// /card serves them byte for byte.
type versionWithCard struct {
	registry.Version
	Card json.RawMessage `json:"card"`
}

// getVersion is GET /api/v1/agents/{id}/versions/{seq}.
func (s *server) getVersion(c echo.Context) error {
	seq, err := strconv.ParseInt(c.Param("seq"), 10, 64)
	if err != nil || seq < 1 {
		return fieldProblem("/seq", "type", "the version number must be a positive integer")
	}
	v, err := s.svc.Version(c.Request().Context(), principal(c), c.Param("id"), seq)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, versionWithCard{Version: versionJSON(*v), Card: v.Raw})
}

// versionJSON fills the version's lists so they are always JSON arrays.
func versionJSON(v registry.Version) registry.Version {
	if v.Diff == nil {
		v.Diff = []agentcard.Change{}
	}
	if v.Signatures == nil {
		v.Signatures = []registry.SignatureResult{}
	}
	if v.Thumbprints == nil {
		v.Thumbprints = []string{}
	}
	if v.Problems == nil {
		v.Problems = []agentcard.Problem{}
	}
	return v
}
