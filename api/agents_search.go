package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/search"
)

// searchPage is GET /agents answered by the index (docs/api.md "Lists and
// search").
type searchPage struct {
	Agents        []searchAgent `json:"agents"`
	NextPageToken string        `json:"nextPageToken"`
	TotalSize     int           `json:"totalSize"`
	Facets        search.Facets `json:"facets"`
}

// searchAgent is the agent record plus, when q was given, why it matched.
type searchAgent struct {
	agentView
	Matches []search.Match `json:"matches,omitzero"`
}

// searchAgents is GET /api/v1/agents through the index, by search.Find: the
// one path every face lists agents by (the index picks the ids, SQL decides
// what the caller sees now, docs/threats.md G.72).
func (s *server) searchAgents(c echo.Context) error {
	r, err := searchParams(c, "sort")
	if err != nil {
		return err
	}
	if len(c.QueryParams()["sort"]) > 1 {
		return fieldProblem("/sort", "repeated", "sort may be given only once")
	}
	sorts, err := enumParam(c, "sort", search.SortRelevance, search.SortName, search.SortUpdated, search.SortTrust)
	if err != nil {
		return err
	}
	if len(sorts) == 1 {
		r.sort = sorts[0]
	}
	page, err := search.Find(c.Request().Context(), s.search, s.svc, r.caller, search.Query{Q: r.q, Filters: r.filters,
		PageSize: r.pageSize, PageToken: r.token, Sort: r.sort})
	if err != nil {
		return err
	}
	out := searchPage{Agents: make([]searchAgent, 0, len(page.Agents)), NextPageToken: page.NextPageToken,
		TotalSize: page.TotalSize, Facets: page.Facets.Lists()}
	for _, f := range page.Agents {
		sa := searchAgent{agentView: agentJSON(f.Agent)}
		if strings.TrimSpace(r.q) != "" {
			sa.Matches = matchesJSON(f.Matches)
		}
		out.Agents = append(out.Agents, sa)
	}
	return writeJSON(c, http.StatusOK, out)
}

// matchesJSON is never null with q: an agent matched by its own fields
// only may carry an empty list.
func matchesJSON(m []search.Match) []search.Match {
	if m == nil {
		return []search.Match{}
	}
	for i := range m {
		if m[i].Fragments == nil {
			m[i].Fragments = []string{}
		}
	}
	return m
}
