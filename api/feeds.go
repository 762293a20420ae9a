package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// Feed page sizes (docs/api.md: limit ≤ 1000).
const (
	defaultFeedLimit = 100
	maxFeedLimit     = 1000
)

func feedParams(c echo.Context) (after int64, limit int, err error) {
	if err := checkParams(c.QueryParams(), "after", "limit"); err != nil {
		return 0, 0, err
	}
	if after, err = cursorParam(c, "after", 0, 0); err != nil {
		return 0, 0, err
	}
	l, err := intParam(c, "limit", defaultFeedLimit, 1, maxFeedLimit)
	return after, int(l), err
}

// listChanges is GET /api/v1/changes?after=&limit=: the change log mirrors
// and indexers follow, filtered by what the caller may list.
func (s *server) listChanges(c echo.Context) error {
	after, limit, err := feedParams(c)
	if err != nil {
		return err
	}
	changes, next, err := s.svc.Changes(c.Request().Context(), principal(c), after, limit)
	if err != nil {
		return err
	}
	if changes == nil {
		changes = []registry.Change{}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"changes": changes, "nextAfter": next})
}

// listAudit is GET /api/v1/audit (admin): oldest first after `after`, or
// with order=newest newest first below `before`; agentId, actor and action
// narrow it.
func (s *server) listAudit(c echo.Context) error {
	if principal(c).Role != registry.RoleAdmin {
		return registry.ErrForbidden // before looking at the parameters
	}
	qv := c.QueryParams()
	if err := checkParams(qv, "after", "before", "limit", "order", "agentId", "actor", "action", "since", "until"); err != nil {
		return err
	}
	q, err := auditFilters(c)
	if err != nil {
		return err
	}
	if q.After, err = cursorParam(c, "after", 0, 0); err != nil {
		return err
	}
	if q.Before, err = cursorParam(c, "before", 0, 1); err != nil {
		return err
	}
	l, err := intParam(c, "limit", defaultFeedLimit, 1, maxFeedLimit)
	if err != nil {
		return err
	}
	q.Limit = int(l)
	order, err := enumParam(c, "order", "oldest", "newest")
	if err != nil {
		return err
	}
	if len(order) > 1 || len(qv["order"]) > 1 {
		return fieldProblem("/order", "repeated", "order may be given only once")
	}
	q.Newest = len(order) == 1 && order[0] == "newest"
	if q.Newest && qv.Has("after") {
		return fieldProblem("/after", "conflict", "after reads oldest first; use before with order=newest")
	}
	if !q.Newest && qv.Has("before") {
		return fieldProblem("/before", "conflict", "before needs order=newest")
	}
	page, err := s.svc.AuditLog(c.Request().Context(), principal(c), q)
	if err != nil {
		return err
	}
	entries := page.Entries
	if entries == nil {
		entries = []registry.AuditEntry{}
	}
	if q.Newest {
		return writeJSON(c, http.StatusOK, map[string]any{"entries": entries, "nextBefore": page.Next})
	}
	return writeJSON(c, http.StatusOK, map[string]any{"entries": entries, "nextAfter": page.Next})
}
