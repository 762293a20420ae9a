package api

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type agentPage struct {
	Agents        []listItem `json:"agents"`
	NextPageToken string     `json:"nextPageToken"`
	TotalSize     int        `json:"totalSize"`
}

// listAgents is GET /api/v1/agents. With a search index every list goes
// through it (searchAgents), except an admin's list of removed agents: the
// index drops tombstones (docs/threats.md G.72), so status=removed without
// search-only parameters is answered from SQL. Without an index the list
// comes from SQL and the search-only parameters answer 503.
func (s *server) listAgents(c echo.Context) error {
	qv := c.QueryParams()
	switch {
	case s.search != nil && (usesSearch(qv) || !slices.Contains(qv["status"], string(registry.StatusRemoved))):
		return s.searchAgents(c)
	case s.search == nil && usesSearch(qv):
		return errNoSearch()
	}
	return s.sqlAgents(c)
}

// sqlAgents lists the agents the caller may list from SQL, keyset-paginated
// (docs/threats.md I.82: no offsets to page deep with).
func (s *server) sqlAgents(c echo.Context) error {
	q, err := listQuery(c)
	if err != nil {
		return err
	}
	page, err := s.svc.List(c.Request().Context(), principal(c), q)
	if err != nil {
		return err
	}
	out := agentPage{Agents: make([]listItem, 0, len(page.Agents)), NextPageToken: page.NextPageToken, TotalSize: page.TotalSize}
	for _, a := range page.Agents {
		v, err := listJSON(a)
		if err != nil {
			return err
		}
		out.Agents = append(out.Agents, v)
	}
	return writeJSON(c, http.StatusOK, out)
}

func listQuery(c echo.Context) (registry.ListQuery, error) {
	var q registry.ListQuery
	if err := checkParams(c.QueryParams(), "status", "health", "trust", "visibility", "pageSize", "pageToken", "sort"); err != nil {
		return q, err
	}
	var err error
	if q.Status, err = enumParam(c, "status", registry.StatusPending, registry.StatusApproved,
		registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved); err != nil {
		return q, err
	}
	if q.Health, err = enumParam(c, "health", registry.HealthUnknown, registry.HealthOK,
		registry.HealthFailing, registry.HealthGone); err != nil {
		return q, err
	}
	if q.Trust, err = enumParam(c, "trust", registry.TrustUnknown, registry.TrustUnsigned,
		registry.TrustVerified, registry.TrustInvalid, registry.TrustUntrusted, registry.TrustError); err != nil {
		return q, err
	}
	if q.Visibility, err = enumParam(c, "visibility", registry.VisibilityPublic, registry.VisibilityInternal, registry.VisibilityGroups); err != nil {
		return q, err
	}
	if q.PageSize, err = pageSizeParam(c); err != nil {
		return q, err
	}
	q.PageToken = c.QueryParam("pageToken")
	sorts, err := enumParam(c, "sort", "updated", "name")
	if err != nil {
		return q, err
	}
	switch len(sorts) {
	case 0:
		q.Sort = "updated"
	case 1:
		q.Sort = sorts[0]
	default:
		return q, fieldProblem("/sort", "repeated", "sort may be given only once")
	}
	return q, nil
}
