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
// (docs/threats.md C.37).
func writeJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}

// agentView is the agent record as the API shows it. `card` is an A2A v1.0
// AgentCard in the specification's JSON names (agentcard.Card.A2A), built
// from the normalized card, which under a partial signature profile is the
// view of the signed members (docs/verification.md): an A2A SDK can connect
// with it as it is. Cardex's own reading of the card sits beside it, with
// trust, health, signatures and problems: the shape the card was written in
// and the protocol versions its interfaces speak.
type agentView struct {
	registry.Agent
	Card             *agentcard.AgentCard `json:"card"`
	CardShape        string               `json:"cardShape,omitempty"`
	ProtocolVersions []string             `json:"protocolVersions,omitempty"`
}

// agentJSON renders the record, filling its lists so they are always JSON
// arrays, as openapi.yaml promises, whatever the store left nil.
func agentJSON(a registry.Agent) agentView {
	if a.Signatures == nil {
		a.Signatures = []registry.SignatureResult{}
	}
	if a.Problems == nil {
		a.Problems = []agentcard.Problem{}
	}
	v := agentView{Agent: a}
	if a.Card != nil {
		v.Card = a.Card.A2A()
		v.CardShape = a.Card.Shape
		v.ProtocolVersions = a.Card.ProtocolVersions
	}
	return v
}

// listItem is an agent as result lists show it (docs/api.md "Lists and
// search"): the record without its card and problems, with the card's
// summary (agentcard.Summary) instead, so a page's size and cost stay
// bounded however large the cards are (docs/threats.md K.96). The whole
// card and the problems are at GET /api/v1/agents/{id} and its /card.
// Search pages write the same JSON without reflection (writeSearchPage).
type listItem struct {
	registry.Agent
	// Card and Problems hide registry.Agent's: never set, so never written.
	Card             *struct{}           `json:"card,omitempty"`
	Problems         []agentcard.Problem `json:"problems,omitempty"`
	Summary          *agentcard.Summary  `json:"summary"`
	CardShape        string              `json:"cardShape,omitempty"`
	ProtocolVersions []string            `json:"protocolVersions,omitempty"`
}

// listJSON renders a listed agent: the stored summary when
// ListedSummaries set one, else the card's.
func listJSON(a registry.Agent) (listItem, error) {
	if a.Signatures == nil {
		a.Signatures = []registry.SignatureResult{}
	}
	v := listItem{Agent: a}
	var b []byte
	switch {
	case a.CardView != nil && a.CardView.Summary != nil:
		b = a.CardView.Summary
		v.CardShape, v.ProtocolVersions = a.CardView.Shape, a.CardView.ProtocolVersions
	case a.Card != nil:
		var err error
		if b, err = a.Card.SummaryJSON(); err != nil {
			return v, err
		}
		v.CardShape, v.ProtocolVersions = a.Card.Shape, a.Card.ProtocolVersions
	default:
		return v, nil
	}
	v.Summary = &agentcard.Summary{}
	return v, json.Unmarshal(b, v.Summary)
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
