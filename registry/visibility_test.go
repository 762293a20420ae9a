package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// oracleList restates the listing rule of docs/security.md independently
// of visibility.go.
func oracleList(p registry.Principal, a registry.Agent) bool {
	listedByAll := a.Status == registry.StatusApproved && a.Health != registry.HealthGone
	switch p.Role {
	case registry.RoleAdmin:
		return true
	case registry.RoleReader:
		return listedByAll
	case registry.RolePublisher:
		return listedByAll || (slices.Contains(p.Hosts, a.Host) && a.Status != registry.StatusRemoved)
	}
	return listedByAll && a.Visibility == registry.VisibilityPublic
}

// oracleRead restates the rule for reading by id.
func oracleRead(p registry.Principal, a registry.Agent) bool {
	if p.Role == registry.RoleAdmin {
		return true
	}
	if a.Status == registry.StatusRemoved {
		return false
	}
	return a.Visibility == registry.VisibilityPublic || p.Role != ""
}

// TestVisibilityRuleAgrees checks every combination of the columns the rule
// reads, for every kind of caller: the SQL list, the index terms (CanList)
// and reading by id all give the documented answer, on both databases.
func TestVisibilityRuleAgrees(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		var agents []registry.Agent
		n := 0
		for _, st := range []registry.Status{registry.StatusPending, registry.StatusApproved, registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved} {
			for _, vis := range []registry.Visibility{registry.VisibilityPublic, registry.VisibilityInternal} {
				for _, h := range []registry.Health{registry.HealthUnknown, registry.HealthOK, registry.HealthFailing, registry.HealthGone} {
					for _, host := range []string{"mine.example.com", "other.example.com"} {
						n++
						a, err := svc.Submit(ctx, admin, fmt.Sprintf("https://%s/agent%d.json", host, n), "")
						if err != nil {
							t.Fatal(err)
						}
						if err := s.WriteDB().Exec("UPDATE agents SET status = ?, visibility = ?, health = ? WHERE id = ?", st, vis, h, a.ID).Error; err != nil {
							t.Fatal(err)
						}
						a.Status, a.Visibility, a.Health = st, vis, h
						agents = append(agents, *a)
					}
				}
			}
		}
		for _, p := range []registry.Principal{anonymous, reader, admin, publisher("mine.example.com"), publisher()} {
			name := string(p.Role) + fmt.Sprint(p.Hosts)
			var want []string
			for _, a := range agents {
				if got, w := registry.CanList(p, a), oracleList(p, a); got != w {
					t.Errorf("%s: CanList(%s %s %s %s) = %t, want %t", name, a.Status, a.Visibility, a.Health, a.Host, got, w)
				}
				if w := oracleList(p, a); w {
					want = append(want, a.ID)
				}
				if got, w := registry.CanRead(p, a), oracleRead(p, a); got != w {
					t.Errorf("%s: CanRead(%s %s %s) = %t, want %t", name, a.Status, a.Visibility, a.Health, got, w)
				}
				_, err := svc.Get(ctx, p, a.ID)
				if oracleRead(p, a) != (err == nil) || (err != nil && !errors.Is(err, registry.ErrNotFound)) {
					t.Errorf("%s: Get(%s %s %s) = %v, readable %t", name, a.Status, a.Visibility, a.Health, err, oracleRead(p, a))
				}
			}
			var got []string
			q := registry.ListQuery{PageSize: 100}
			for {
				page, err := svc.List(ctx, p, q)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ids(page.Agents)...)
				if q.PageToken = page.NextPageToken; q.PageToken == "" {
					break
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: SQL lists %d agents, the rule %d", name, len(got), len(want))
			}
		}
	})
}

// The scope key tells scopes apart exactly when they list different agents.
func TestScopeKey(t *testing.T) {
	key := func(p registry.Principal) string { return registry.ScopeOf(p).Key() }
	if key(anonymous) != (registry.Scope{}).Key() {
		t.Fatal("the zero scope is not the anonymous one")
	}
	if key(publisher("a.example.com", "b.example.com")) != key(publisher("b.example.com", "a.example.com")) {
		t.Fatal("host order changes the key")
	}
	seen := map[string]string{}
	for _, p := range []registry.Principal{anonymous, reader, admin, publisher("a.example.com"), publisher("b.example.com")} {
		k := key(p)
		if prev, ok := seen[k]; ok {
			t.Fatalf("%v and %s share key %q", p, prev, k)
		}
		seen[k] = fmt.Sprint(p)
	}
	if key(publisher()) != key(reader) {
		t.Fatal("a publisher without hosts lists what a reader lists")
	}
}
