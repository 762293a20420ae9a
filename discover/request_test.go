package discover

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

var admin = registry.Principal{Role: registry.RoleAdmin}

// The A2A data part and the MCP arguments (both a Request) carry every
// filter of the one filter table under its name, and no other filter: a
// filter added to the table without a member here, or a member the table
// lacks, fails.
func TestRequestCarriesEveryFilterOfTheTable(t *testing.T) {
	var members []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Request]()) {
		if f.Type == reflect.TypeFor[[]string]() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			members = append(members, name)
		}
	}
	var names []string
	for _, f := range search.FilterTable() {
		names = append(names, f.Name)
		v := "x"
		if f.Values != nil {
			v = f.Values[len(f.Values)-1]
		}
		var r Request
		dec := json.NewDecoder(strings.NewReader(`{"` + f.Name + `": ["` + v + `", " ", "` + v + `"]}`))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		q, err := r.Query(admin)
		if err != nil {
			t.Errorf("%s=%s: %v", f.Name, v, err)
			continue
		}
		if got := f.Get(&q.Filters); !slices.Equal(got, []string{v}) {
			t.Errorf("%s=%s: filter %q, want [%s]", f.Name, v, got, v)
		}
		if f.Values != nil {
			bad := Request{}
			reflect.ValueOf(&bad).Elem().FieldByNameFunc(func(n string) bool {
				sf, _ := reflect.TypeFor[Request]().FieldByName(n)
				name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
				return name == f.Name
			}).Set(reflect.ValueOf([]string{"no-such-value"}))
			_, err := bad.Query(admin)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != f.Name || !errors.Is(err, ErrInvalid) {
				t.Errorf("%s=no-such-value: %v, want a FieldError naming %s", f.Name, err, f.Name)
			}
		}
	}
	slices.Sort(members)
	slices.Sort(names)
	if !slices.Equal(members, names) {
		t.Fatalf("Request's filter members %v, the filter table %v", members, names)
	}
}

// live is a filter on A2A and MCP as on the API and the web
// (docs/discovery.md), with the table's values.
func TestRequestLiveFilter(t *testing.T) {
	q, err := Request{Live: []string{"answering", "degraded"}}.Query(registry.Principal{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Filters.Liveness, []string{"answering", "degraded"}) {
		t.Fatalf("liveness filter %q", q.Filters.Liveness)
	}
	_, err = Request{Live: []string{"alive"}}.Query(registry.Principal{})
	if got := err.Error(); got != `live: "alive" is not one of answering, degraded, unreachable, unknown` {
		t.Fatalf("live=alive: %q", got)
	}
	// The curation filters stay admin-only.
	if _, err := (Request{Health: []string{"ok"}}).Query(registry.Principal{}); !errors.Is(err, registry.ErrForbidden) {
		t.Fatalf("health from an anonymous caller: %v", err)
	}
}
