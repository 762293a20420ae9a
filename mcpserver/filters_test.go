package mcpserver

import (
	"maps"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
)

// search_agents and list_skills declare every parameter of the one listing
// parse (search.ParamNames: q, every filter of the table, paging) but sort,
// and no other.
func TestSearchSchemaNamesEveryFilter(t *testing.T) {
	want := slices.DeleteFunc(search.ParamNames(), func(n string) bool { return n == search.ParamSort })
	slices.Sort(want)
	got := slices.Sorted(maps.Keys(searchSchema().Properties))
	if !slices.Equal(got, want) {
		t.Fatalf("input schema properties %v, want %v", got, want)
	}
}

// live filters search_agents as it filters the API's list: the fixture's
// agents were never probed, so all are unknown and none answering.
func TestSearchAgentsLiveFilter(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	cs := s.session(t, nil, eras[0])
	var all, unknown, answering discover.Page
	call(t, cs, "search_agents", map[string]any{}, &all)
	call(t, cs, "search_agents", map[string]any{"live": []string{"unknown"}}, &unknown)
	call(t, cs, "search_agents", map[string]any{"live": []string{"answering"}}, &answering)
	if all.TotalSize != 2 || unknown.TotalSize != 2 || len(unknown.Agents) != 2 || answering.TotalSize != 0 || len(answering.Agents) != 0 {
		t.Fatalf("all %d, live=unknown %d (%d listed), live=answering %d (%d listed)",
			all.TotalSize, unknown.TotalSize, len(unknown.Agents), answering.TotalSize, len(answering.Agents))
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_agents", Arguments: map[string]any{"live": []string{"alive"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := errorText(res); got != `live: "alive" is not one of answering, degraded, unreachable, unknown` {
		t.Fatalf("live=alive: %q", got)
	}
}
