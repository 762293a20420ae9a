package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// writeJSON renders v with encoding/json's HTML escaping left on, so card
// text such as "</script>" stays inert even if a client sniffs it as HTML
// (RELIABILITY.md C.37).
func writeJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}

// agentJSON fills the record's lists so they are always JSON arrays, as
// openapi.yaml promises, whatever the store left nil.
func agentJSON(a registry.Agent) registry.Agent {
	if a.Signatures == nil {
		a.Signatures = []registry.SignatureResult{}
	}
	if a.Problems == nil {
		a.Problems = []agentcard.Problem{}
	}
	return a
}

func writeAgent(c echo.Context, status int, a *registry.Agent) error {
	return writeJSON(c, status, agentJSON(*a))
}

func writeAgentOK(c echo.Context, a *registry.Agent, err error) error {
	if err != nil {
		return err
	}
	return writeAgent(c, http.StatusOK, a)
}
