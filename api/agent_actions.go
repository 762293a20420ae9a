package api

import (
	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type actionRequest struct {
	Reason     string `json:"reason"`
	VersionSeq *int64 `json:"versionSeq"`
}

// maxReason bounds the free text an admin attaches to an action.
const maxReason = 1000

// act is POST /api/v1/agents/{id}/{approve|reject|suspend|restore}
// {"reason", "versionSeq"} (admin). Approve names the version reviewed, so
// a card that changed meanwhile is not approved unseen (docs/threats.md
// F.65); repeating an action in effect is 200 with one audit entry (I.80).
func (s *server) act(action registry.Action) echo.HandlerFunc {
	return func(c echo.Context) error {
		body, raw, err := readBody(c, action == registry.ActionApprove)
		if err != nil {
			return err
		}
		var req actionRequest
		if err := decodeObject(body, raw, &req, "reason", "versionSeq"); err != nil {
			return err
		}
		if err := checkAction(action, req); err != nil {
			return err
		}
		a, err := s.svc.Act(c.Request().Context(), principal(c), c.Param("id"), action,
			registry.ActionRequest{Reason: req.Reason, VersionSeq: req.VersionSeq})
		if err == nil && action == registry.ActionRestore {
			// A restored agent is due again (pending or approved): fetch it
			// now so its record is current when an admin looks.
			s.kick()
		}
		return writeAgentOK(c, a, err)
	}
}

func checkAction(action registry.Action, req actionRequest) error {
	if len(req.Reason) > maxReason {
		return fieldProblem("/reason", "too-long", "reason is longer than 1000 bytes")
	}
	if req.VersionSeq != nil && *req.VersionSeq < 0 {
		return fieldProblem("/versionSeq", "minimum", "versionSeq must not be negative")
	}
	if action == registry.ActionApprove && req.VersionSeq == nil {
		return fieldProblem("/versionSeq", "required", "versionSeq (the version reviewed) is required to approve")
	}
	return nil
}

type reasonRequest struct {
	Reason string `json:"reason"`
}

// removeAgent is DELETE /api/v1/agents/{id} with an optional {"reason"}
// (admin); the record stays as a tombstone.
func (s *server) removeAgent(c echo.Context) error {
	body, raw, err := readBody(c, false)
	if err != nil {
		return err
	}
	var req reasonRequest
	if err := decodeObject(body, raw, &req, "reason"); err != nil {
		return err
	}
	if len(req.Reason) > maxReason {
		return fieldProblem("/reason", "too-long", "reason is longer than 1000 bytes")
	}
	a, err := s.svc.Act(c.Request().Context(), principal(c), c.Param("id"), registry.ActionRemove,
		registry.ActionRequest{Reason: req.Reason})
	return writeAgentOK(c, a, err)
}
