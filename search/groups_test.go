package search

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// TestGroupsListingTerms (docs/security.md "Agents for groups"): an agent
// for groups carries a group:<name> listing term per group while approved
// and not gone, so searches, facets and tags show it only to callers
// holding one of its groups (exactly), its host's publishers and admins.
func TestGroupsListingTerms(t *testing.T) {
	src := newMemSource()
	pay := testAgent("g1", "Payroll", "Payroll runs", skill("p", "Pay", "pays", "grp"))
	pay.Visibility, pay.Groups = registry.VisibilityGroups, []string{"payments"}
	both := testAgent("g2", "Ledger", "Ledger entries", skill("l", "Ledger", "books", "grp"))
	both.Visibility, both.Groups = registry.VisibilityGroups, []string{"/Risk Team", "payments"}
	gone := testAgent("g3", "Gone", "Gone ledger", skill("g", "Gone", "gone", "grp"))
	gone.Visibility, gone.Groups, gone.Health = registry.VisibilityGroups, []string{"payments"}, registry.HealthGone
	pub := testAgent("g4", "Public", "Public ledger", skill("u", "Pub", "public", "grp"))
	for _, a := range []registry.Agent{pay, both, gone, pub} {
		src.put(a, registry.ChangeSubmitted)
	}
	if got := registry.ListTerms(both); !slices.Equal(got, []string{"admin", "group:/Risk Team", "group:payments", "host:g2.example.com", "origin:https://g2.example.com"}) {
		t.Errorf("ListTerms = %q", got)
	}
	x := openTest(t, src)
	reader := func(groups ...string) registry.Scope {
		return registry.ScopeOf(registry.Principal{Role: registry.RoleReader, Groups: groups})
	}
	for _, c := range []struct {
		name string
		v    registry.Scope
		want []string
	}{
		{"anonymous", scopeAnonymous, []string{"g4"}},
		{"anonymous with groups", registry.ScopeOf(registry.Principal{Groups: []string{"payments"}}), []string{"g4"}},
		{"reader", reader(), []string{"g4"}},
		{"payments", reader("payments"), []string{"g1", "g2", "g4"}},
		{"risk team", reader("/Risk Team"), []string{"g2", "g4"}},
		{"case differs", reader("Payments", "/risk team"), []string{"g4"}},
		{"publisher of g1's host", registry.ScopeOf(registry.Principal{Role: registry.RolePublisher, Hosts: []string{"g1.example.com"}}), []string{"g1", "g4"}},
		{"admin", scopeAdmin, []string{"g1", "g2", "g3", "g4"}},
	} {
		r := mustSearch(t, x, Query{Scope: c.v})
		if got := sortedIDs(r); !slices.Equal(got, c.want) {
			t.Errorf("%s: lists %v, want %v", c.name, got, c.want)
		}
		if hits := hitIDs(mustSearch(t, x, Query{Q: "ledger payroll", Scope: c.v})); slices.ContainsFunc(hits, func(id string) bool { return !slices.Contains(c.want, id) }) {
			t.Errorf("%s: text query shows %v", c.name, hits)
		}
		tags, err := x.Tags(t.Context(), "grp", c.v, 10)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(tags) != fmt.Sprint([]FacetValue{{"grp", len(c.want)}}) || fmt.Sprint(r.Facets.Tags) != fmt.Sprint(tags) {
			t.Errorf("%s: tags %v, facets %v, want grp %d", c.name, tags, r.Facets.Tags, len(c.want))
		}
	}
}
