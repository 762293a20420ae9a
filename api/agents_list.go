package api

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
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

// filterValues are the values of an enumerated filter of the search filter
// table, which the SQL listing accepts too (sqlListParams).
func filterValues[T ~string](name string) []T {
	f, _ := search.FilterNamed(name)
	out := make([]T, len(f.Values))
	for i, v := range f.Values {
		out[i] = T(v)
	}
	return out
}

func listQuery(c echo.Context) (registry.ListQuery, error) {
	var q registry.ListQuery
	if err := checkParams(c.QueryParams(), "status", "health", "trust", "visibility", "pageSize", "pageToken", "sort"); err != nil {
		return q, err
	}
	var err error
	if q.Status, err = enumParam(c, "status", filterValues[registry.Status]("status")...); err != nil {
		return q, err
	}
	if q.Health, err = enumParam(c, "health", filterValues[registry.Health]("health")...); err != nil {
		return q, err
	}
	if q.Trust, err = enumParam(c, "trust", filterValues[registry.Trust]("trust")...); err != nil {
		return q, err
	}
	if q.Visibility, err = enumParam(c, "visibility", filterValues[registry.Visibility]("visibility")...); err != nil {
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
