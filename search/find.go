package search

import (
	"context"
	"slices"

	"github.com/cardexhq/cardex/registry"
)

// Every face that lists agents (the REST API, the web catalogue, the A2A and MCP surfaces)
// finds them here, so the same caller sees the same agents on each: the
// index picks and orders the ids and counts the facets, and the records come
// from SQL through registry.Service.Listed (the listing rule of
// registry/visibility.go), re-checked against the SQL-column filters, so an
// agent hidden or changed since the index last caught up never shows
// (docs/threats.md G.72).

// Querier is the part of *Index that Find and FindSkills use.
type Querier interface {
	Search(ctx context.Context, q Query) (*Result, error)
	Skills(ctx context.Context, q SkillQuery) (*SkillResult, error)
}

// Lister reads the records of ids that a caller may list, in the order of
// ids; *registry.Service has it.
type Lister interface {
	Listed(ctx context.Context, p registry.Principal, ids []string) ([]registry.Agent, error)
}

// Found is one agent of a Page: the current SQL record and why it matched.
type Found struct {
	Agent   registry.Agent
	Matches []Match
	// Score is the index's relevance score of the hit (0 without text).
	Score float64
}

// Page is one page of Find. A hit dropped by the SQL re-check leaves its
// page one shorter; NextPageToken still continues after it, and TotalSize
// (the index's count) may exceed what is listed by the few changes the index
// has not applied yet.
type Page struct {
	Agents        []Found
	NextPageToken string
	TotalSize     int
	Facets        Facets
}

// Find runs q as caller: q.Scope is set from the caller, whatever it held.
func Find(ctx context.Context, ix Querier, l Lister, caller registry.Principal, q Query) (*Page, error) {
	q.Scope = registry.ScopeOf(caller)
	res, err := ix.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	current, err := listable(ctx, l, caller, q.Filters, ids)
	if err != nil {
		return nil, err
	}
	out := &Page{Agents: make([]Found, 0, len(res.Hits)), NextPageToken: res.NextPageToken,
		TotalSize: res.TotalSize, Facets: res.Facets}
	for _, h := range res.Hits {
		if a, ok := current[h.ID]; ok {
			out.Agents = append(out.Agents, Found{Agent: *a, Matches: h.Matches, Score: h.Score})
		}
	}
	return out, nil
}

// FindSkills runs q as caller and keeps the skills whose agent the caller
// may list now (the same SQL re-check as Find).
func FindSkills(ctx context.Context, ix Querier, l Lister, caller registry.Principal, q SkillQuery) (*SkillResult, error) {
	q.Scope = registry.ScopeOf(caller)
	res, err := ix.Skills(ctx, q)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, h := range res.Skills {
		if !slices.Contains(ids, h.AgentID) {
			ids = append(ids, h.AgentID)
		}
	}
	current, err := listable(ctx, l, caller, q.Filters, ids)
	if err != nil {
		return nil, err
	}
	out := &SkillResult{Skills: make([]SkillHit, 0, len(res.Skills)), NextPageToken: res.NextPageToken, TotalSize: res.TotalSize}
	for _, h := range res.Skills {
		if _, ok := current[h.AgentID]; ok {
			out.Skills = append(out.Skills, h)
		}
	}
	return out, nil
}

// listable reads the agents with these ids in one query and keeps those
// caller may list now and that still match the SQL-column filters.
func listable(ctx context.Context, l Lister, caller registry.Principal, f Filters, ids []string) (map[string]*registry.Agent, error) {
	agents, err := l.Listed(ctx, caller, ids)
	if err != nil {
		return nil, err
	}
	checks := f.columnChecks()
	out := make(map[string]*registry.Agent, len(agents))
	for i := range agents {
		if a := &agents[i]; matchColumns(checks, a) {
			out[a.ID] = a
		}
	}
	return out, nil
}

// columnCheck is a filter with values that has an SQL column.
type columnCheck struct {
	values []string
	column func(*registry.Agent) string
}

// columnChecks are the filters of f that listable re-checks on the SQL
// columns (the index may hold an older status, health, visibility, trust
// or liveness): those of the filter table with a column and values.
func (f *Filters) columnChecks() []columnCheck {
	var out []columnCheck
	for i := range filterTable {
		ft := &filterTable[i]
		if vals := ft.Get(f); ft.column != nil && len(vals) > 0 {
			out = append(out, columnCheck{vals, ft.column})
		}
	}
	return out
}

// matchColumns reports whether a passes every check.
func matchColumns(checks []columnCheck, a *registry.Agent) bool {
	for _, c := range checks {
		if !slices.Contains(c.values, c.column(a)) {
			return false
		}
	}
	return true
}

// Lists returns f with every facet a list (empty rather than nil), so each
// is a JSON array as the API and the discovery surfaces promise.
func (f Facets) Lists() Facets {
	for _, l := range []*[]FacetValue{&f.Tags, &f.InputModes, &f.OutputModes, &f.Bindings,
		&f.SecuritySchemes, &f.ProtocolVersions, &f.Capabilities, &f.Extensions, &f.Trust, &f.Providers, &f.Liveness} {
		if *l == nil {
			*l = []FacetValue{}
		}
	}
	return f
}
