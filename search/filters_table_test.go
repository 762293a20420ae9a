package search

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// ParseQuery is the one parse of a listing: exact values, codes and the
// documented defaults.
func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(map[string][]string{})
	if err != nil || q.PageSize != DefaultPageSize || q.Sort != "" || q.sort() != SortTrust || q.Q != "" {
		t.Fatalf("no parameters: %+v, %v", q, err)
	}
	if q, _ := ParseQuery(map[string][]string{"q": {"fx"}}); q.sort() != SortRelevance {
		t.Fatalf("q without sort: %s, want relevance", q.sort())
	}
	q, err = ParseQuery(map[string][]string{
		"q": {"fx"}, "tag": {"Finance", "", " ", "Finance", "travel"}, "live": {"answering"},
		"status": {"approved"}, "pageSize": {"5"}, "pageToken": {"t"}, "sort": {"name"}, "colour": {"blue"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if q.Q != "fx" || !slices.Equal(q.Filters.Tags, []string{"Finance", "travel"}) || !slices.Equal(q.Filters.Liveness, []string{"answering"}) ||
		!slices.Equal(q.Filters.Statuses, []string{"approved"}) || q.PageSize != 5 || q.PageToken != "t" || q.Sort != SortName {
		t.Fatalf("parsed %+v", q)
	}
	many := make([]string, MaxFilterValues+1)
	for i := range many {
		many[i] = string(rune('a' + i))
	}
	for _, tc := range []struct {
		vals       map[string][]string
		name, code string
	}{
		{map[string][]string{"q": {"a", "b"}}, "q", "repeated"},
		{map[string][]string{"q": {strings.Repeat("a", MaxQueryBytes+1)}}, "q", "too-long"},
		{map[string][]string{"q": {"\xff"}}, "q", "invalid"},
		{map[string][]string{"tag": many}, "tag", "too-many"},
		{map[string][]string{"provider": {strings.Repeat("p", MaxFilterBytes+1)}}, "provider", "invalid"},
		{map[string][]string{"capability": {"teleport"}}, "capability", "enum"},
		{map[string][]string{"live": {"alive"}}, "live", "enum"},
		{map[string][]string{"pageSize": {"0"}}, "pageSize", "range"},
		{map[string][]string{"pageSize": {"101"}}, "pageSize", "range"},
		{map[string][]string{"pageSize": {"99999999999999999999"}}, "pageSize", "range"},
		{map[string][]string{"pageSize": {"ten"}}, "pageSize", "type"},
		{map[string][]string{"pageToken": {"a", "b"}}, "pageToken", "repeated"},
		{map[string][]string{"sort": {"random"}}, "sort", "enum"},
	} {
		_, err := ParseQuery(tc.vals)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Name != tc.name || pe.Code != tc.code || !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("%v: %v, want %s %s", tc.vals, err, tc.name, tc.code)
		}
	}
	if _, err := ParseQuery(map[string][]string{"trust": {"great"}}); err.Error() != `trust: "great" is not one of unknown, unsigned, verified, invalid, untrusted, error` {
		t.Errorf("trust=great: %q", err)
	}
}

// Every filter of the table reaches the index query, the SQL re-check (when
// it has a column) and the page-token key; ParamNames lists each once.
func TestFilterTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range ParamNames() {
		if seen[n] {
			t.Errorf("%s twice in ParamNames", n)
		}
		seen[n] = true
	}
	for _, f := range filterTable {
		if f.Name == "" || f.Title == "" || f.field == "" || f.slot == nil {
			t.Errorf("filter %+v incomplete", f)
		}
		var fs Filters
		*f.slot(&fs) = []string{"v"}
		clauses := filterClauses(fs)
		if len(clauses) != 1 || clauses[0].field != f.field {
			t.Errorf("%s: clauses %+v", f.Name, clauses)
		}
		if queryKey("agents", "", registry.Scope{All: true}, "", fs) == queryKey("agents", "", registry.Scope{All: true}, "", Filters{}) {
			t.Errorf("%s: not in the page-token key", f.Name)
		}
	}
}
