package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// searchPage is GET /agents answered by the index (CONTRACT.md §5 "Lists and
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

// searchAgents is GET /api/v1/agents through the index: the index picks and
// orders the ids and counts the facets; the records come from SQL in one
// query per page, and each is re-checked there against the caller's scope
// and the status, health, visibility and trust filters, so an agent removed,
// hidden or changed since the index last caught up never shows (RELIABILITY.md
// G.72). A hit dropped that way leaves its page one shorter; the page token
// still continues after it, and totalSize (the index's count) may exceed the
// agents listed by the few changes the index has not applied yet.
func (s *server) searchAgents(c echo.Context) error {
	r, err := searchParams(c, "sort")
	if err != nil {
		return err
	}
	if len(c.QueryParams()["sort"]) > 1 {
		return fieldProblem("/sort", "repeated", "sort may be given only once")
	}
	sorts, err := enumParam(c, "sort", search.SortRelevance, search.SortName, search.SortUpdated)
	if err != nil {
		return err
	}
	if len(sorts) == 1 {
		r.sort = sorts[0]
	}
	ctx := c.Request().Context()
	res, err := s.search.Search(ctx, search.Query{Q: r.q, Filters: r.filters, Scope: registry.ScopeOf(r.caller),
		PageSize: r.pageSize, PageToken: r.token, Sort: r.sort})
	if err != nil {
		return err
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	current, err := s.listable(ctx, r, ids)
	if err != nil {
		return err
	}
	out := searchPage{Agents: make([]searchAgent, 0, len(res.Hits)), NextPageToken: res.NextPageToken,
		TotalSize: res.TotalSize, Facets: facetsJSON(res.Facets)}
	for _, h := range res.Hits {
		a, ok := current[h.ID]
		if !ok {
			continue
		}
		sa := searchAgent{agentView: agentJSON(a)}
		if strings.TrimSpace(r.q) != "" {
			sa.Matches = matchesJSON(h.Matches)
		}
		out.Agents = append(out.Agents, sa)
	}
	return writeJSON(c, http.StatusOK, out)
}

// listable reads the agents with these ids from SQL in one query and keeps
// those the request may list now (registry.Service.Listed: the listing rule
// applied to the SQL record, G.72) and that still match its filters.
func (s *server) listable(ctx context.Context, r searchRequest, ids []string) (map[string]registry.Agent, error) {
	agents, err := s.svc.Listed(ctx, r.caller, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]registry.Agent, len(agents))
	for _, a := range agents {
		if r.matchesColumns(a) {
			out[a.ID] = a
		}
	}
	return out, nil
}

// matchesColumns re-checks the filters on SQL columns (the index may hold
// an older status, health, visibility, trust or liveness).
func (r searchRequest) matchesColumns(a registry.Agent) bool {
	in := func(vals []string, v string) bool { return len(vals) == 0 || slices.Contains(vals, v) }
	f := r.filters
	return in(f.Statuses, string(a.Status)) && in(f.Healths, string(a.Health)) &&
		in(f.Visibilities, string(a.Visibility)) && in(f.Trust, string(a.Trust)) &&
		(a.Liveness == nil || in(f.Liveness, string(a.Liveness.State)))
}

// facetsJSON makes every facet a JSON array, as openapi.yaml promises.
func facetsJSON(f search.Facets) search.Facets {
	for _, l := range []*[]search.FacetValue{&f.Tags, &f.InputModes, &f.OutputModes, &f.Bindings,
		&f.SecuritySchemes, &f.ProtocolVersions, &f.Capabilities, &f.Extensions, &f.Trust, &f.Liveness} {
		if *l == nil {
			*l = []search.FacetValue{}
		}
	}
	return f
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
