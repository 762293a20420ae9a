package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/strictjson"
)

type bulkRequest struct {
	Action string     `json:"action"`
	Reason string     `json:"reason"`
	Items  []bulkItem `json:"items"`
}

type bulkItem struct {
	ID         string `json:"id"`
	VersionSeq *int64 `json:"versionSeq"`
}

// bulkResult is one item's answer: ok with the agent's curation state, or
// the problem the single action would have answered.
type bulkResult struct {
	ID          string          `json:"id"`
	OK          bool            `json:"ok"`
	Status      registry.Status `json:"status,omitempty"`
	VersionSeq  *int64          `json:"versionSeq,omitempty"`
	NeedsReview *bool           `json:"needsReview,omitempty"`
	Trust       registry.Trust  `json:"trust,omitempty"`
	Problem     *problem        `json:"problem,omitempty"`
}

// bulkActions are the actions POST /agents/bulk takes.
var bulkActions = map[string]registry.Action{
	"approve": registry.ActionApprove, "reject": registry.ActionReject, "suspend": registry.ActionSuspend,
	"restore": registry.ActionRestore, "remove": registry.ActionRemove,
}

// bulkAct is POST /api/v1/agents/bulk {"action", "reason", "items":
// [{"id", "versionSeq"}]} (admin): one curation action on up to
// registry.MaxBulk agents, each at the version the caller saw, answered per
// item in request order (docs/api.md "Bulk curation").
func (s *server) bulkAct(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req bulkRequest
	if err := decodeObject(body, raw, &req, "action", "reason", "items"); err != nil {
		return err
	}
	if err := checkBulkItems(body); err != nil {
		return err
	}
	action, ok := bulkActions[req.Action]
	if !ok {
		return fieldProblem("/action", "enum", "action must be one of approve, reject, suspend, restore, remove")
	}
	if len(req.Reason) > maxReason {
		return fieldProblem("/reason", "too-long", "reason is longer than 1000 bytes")
	}
	if len(req.Items) == 0 || len(req.Items) > registry.MaxBulk {
		return fieldProblem("/items", "size", fmt.Sprintf("items must hold 1 to %d agents", registry.MaxBulk))
	}
	items := make([]registry.BulkItem, len(req.Items))
	for i, it := range req.Items {
		if it.ID == "" {
			return fieldProblem(fmt.Sprintf("/items/%d/id", i), "required", "every item needs the agent's id")
		}
		if it.VersionSeq != nil && *it.VersionSeq < 0 {
			return fieldProblem(fmt.Sprintf("/items/%d/versionSeq", i), "minimum", "versionSeq must not be negative")
		}
		items[i] = registry.BulkItem{ID: it.ID, VersionSeq: it.VersionSeq}
	}
	res, err := s.svc.ActMany(c.Request().Context(), principal(c), action, items, req.Reason)
	if err != nil {
		return err
	}
	out := struct {
		Results   []bulkResult `json:"results"`
		Succeeded int          `json:"succeeded"`
		Failed    int          `json:"failed"`
	}{Results: make([]bulkResult, len(res))}
	for i, r := range res {
		br := bulkResult{ID: r.ID}
		if r.Err != nil {
			br.Problem = toProblem(r.Err, "")
			out.Failed++
		} else {
			seq, review := r.VersionSeq, r.NeedsReview
			br.OK, br.Status, br.VersionSeq, br.NeedsReview, br.Trust = true, r.Status, &seq, &review, r.Trust
			out.Succeeded++
		}
		out.Results[i] = br
	}
	if out.Succeeded > 0 && action == registry.ActionRestore {
		s.kick()
	}
	return writeJSON(c, http.StatusOK, out)
}

// checkBulkItems refuses unknown members inside items, as decodeObject
// does at the top level.
func checkBulkItems(body *strictjson.Value) error {
	for _, m := range body.Object {
		if m.Key != "items" {
			continue
		}
		if m.Value.Kind != strictjson.Array {
			return fieldProblem("/items", "type", "/items must be a JSON array")
		}
		for i, it := range m.Value.Array {
			if it.Kind != strictjson.Object {
				return fieldProblem(fmt.Sprintf("/items/%d", i), "type", "every item must be a JSON object")
			}
			for _, f := range it.Object {
				if f.Key != "id" && f.Key != "versionSeq" {
					ptr := fmt.Sprintf("/items/%d", i) + strictjson.Pointer(clip(f.Key, 64))
					p := newProblem("unknown-field", "unknown field "+ptr)
					p.Errors = fieldProblem(ptr, "unknown-field", "items have no field "+ptr).Errors
					return p
				}
			}
		}
	}
	return nil
}
