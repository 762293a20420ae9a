package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// Feed page sizes (CONTRACT.md §5: limit ≤ 1000).
const (
	defaultFeedLimit = 100
	maxFeedLimit     = 1000
)

func feedParams(c echo.Context) (after int64, limit int, err error) {
	if err := checkParams(c.QueryParams(), "after", "limit"); err != nil {
		return 0, 0, err
	}
	if after, err = intParam(c, "after", 0, 0, 1<<62); err != nil {
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

// listAudit is GET /api/v1/audit?after=&limit= (admin).
func (s *server) listAudit(c echo.Context) error {
	after, limit, err := feedParams(c)
	if err != nil {
		return err
	}
	entries, next, err := s.svc.Audit(c.Request().Context(), principal(c), after, limit)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []registry.AuditEntry{}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"entries": entries, "nextAfter": next})
}
