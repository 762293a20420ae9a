package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// oracleList restates the listing rule of docs/security.md independently
// of visibility.go.
func oracleList(p registry.Principal, a registry.Agent) bool {
	listedByAll := a.Status == registry.StatusApproved && a.Health != registry.HealthGone
	public := listedByAll && a.Visibility == registry.VisibilityPublic
	switch p.Role {
	case registry.RoleAdmin:
		return true
	case registry.RoleReader:
		return listedByAll
	case registry.RolePublisher:
		// Claim-issued or operator-made alike: the anonymous listing plus
		// its own hosts, never another host's internal agent.
		// A claim's token that named a port or scheme: its origin only.
		return public || (slices.Contains(p.Hosts, a.Host) && a.Status != registry.StatusRemoved &&
			(p.Origin == "" || cardurl.Origin(a.CardURL) == p.Origin))
	}
	return public
}

// oracleRead restates the rule for reading by id.
func oracleRead(p registry.Principal, a registry.Agent) bool {
	if p.Role == registry.RoleAdmin {
		return true
	}
	if a.Status == registry.StatusRemoved {
		return false
	}
	if a.Visibility == registry.VisibilityPublic {
		return true
	}
	return p.Role == registry.RoleReader || (p.Role == registry.RolePublisher && slices.Contains(p.Hosts, a.Host) &&
		(p.Origin == "" || cardurl.Origin(a.CardURL) == p.Origin))
}

// TestVisibilityRuleAgrees checks every combination of the columns the rule
// reads, for every kind of caller: the SQL list, the index terms (CanList)
// and reading by id all give the documented answer, on both databases.
func TestVisibilityRuleAgrees(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		// Plain http too: two origins of one host (docs/threats.md K.104).
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, URLPolicy: registry.URLPolicy{AllowInsecureHTTP: true}})
		ctx := t.Context()
		var agents []registry.Agent
		n := 0
		for _, st := range []registry.Status{registry.StatusPending, registry.StatusApproved, registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved} {
			for _, vis := range []registry.Visibility{registry.VisibilityPublic, registry.VisibilityInternal} {
				for _, h := range []registry.Health{registry.HealthUnknown, registry.HealthOK, registry.HealthFailing, registry.HealthGone} {
					for _, origin := range []string{"https://mine.example.com", "http://mine.example.com", "https://other.example.com"} {
						n++
						a, err := svc.Submit(ctx, admin, fmt.Sprintf("%s/agent%d.json", origin, n), "")
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
		claimed := publisher("mine.example.com")
		claimed.Origin = "https://mine.example.com"
		for _, p := range []registry.Principal{anonymous, reader, admin, publisher("mine.example.com"), publisher(), claimed} {
			name := string(p.Role) + fmt.Sprint(p.Hosts) + p.Origin
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

		// Change-log rows older than migration 00120 (reach -1) are judged
		// by the agent's state now: each caller's feed shows the old
		// submission of exactly the agents it lists now, as it was.
		if err := s.WriteDB().Exec("UPDATE changes SET reach_before = -1, reach_after = -1").Error; err != nil {
			t.Fatal(err)
		}
		for _, p := range []registry.Principal{anonymous, reader, admin, publisher("mine.example.com"), publisher(), claimed} {
			var want, got []string
			for _, a := range agents {
				if oracleList(p, a) {
					want = append(want, a.ID)
				}
			}
			cs, _, err := svc.Changes(ctx, p, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if c.Kind != registry.ChangeSubmitted {
					t.Errorf("%s%v: old change shows as %q", p.Role, p.Hosts, c.Kind)
				}
				got = append(got, c.AgentID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s%v: the feed shows %d old changes, the rule lists %d agents", p.Role, p.Hosts, len(got), len(want))
			}
		}
	})
}

// TestChangeFeedRuleAgrees checks the change log's spelling of the rule
// (visibility.go changeSQL and feedKind) against the oracle for every
// reach before and after a change, agents of two hosts and every kind of
// caller: a change is shown when the caller could list the agent on either
// side, as "unlisted" when it cannot after, on both databases.
func TestChangeFeedRuleAgrees(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		ctx := t.Context()
		start, err := s.LatestChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hosts := []string{"mine.example.com", "other.example.com"}
		host := map[string]string{}
		for _, h := range hosts {
			a, err := svc.Submit(ctx, admin, "https://"+h+"/agent.json", "")
			if err != nil {
				t.Fatal(err)
			}
			host[a.ID] = h
			for before := range 4 {
				for after := range 4 {
					if err := s.WriteDB().Exec("INSERT INTO changes (agent_id, kind, at, reach_before, reach_after) VALUES (?, ?, ?, ?, ?)",
						a.ID, fmt.Sprintf("k%d%d", before, after), time.Now(), before, after).Error; err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		all, _, err := svc.Changes(ctx, admin, start, 1000)
		if err != nil {
			t.Fatal(err)
		}
		type side struct{ host, kind string }
		bySeq := map[int64]side{}
		submissions := map[int64]bool{} // written by Submit, not by the loop
		for _, c := range all {
			if c.Kind == registry.ChangeSubmitted {
				submissions[c.Seq] = true
			} else {
				bySeq[c.Seq] = side{host[c.AgentID], c.Kind}
			}
		}
		if len(bySeq) != 32 {
			t.Fatalf("admin sees %d of the 32 rows", len(bySeq))
		}
		oracle := func(p registry.Principal, r int, h string) bool {
			switch p.Role {
			case registry.RoleAdmin:
				return true
			case registry.RoleReader:
				return r >= 2
			case registry.RolePublisher:
				return r >= 3 || (r >= 1 && slices.Contains(p.Hosts, h) && (p.Origin == "" || p.Origin == "https://"+h))
			}
			return r >= 3
		}
		// Claims' tokens scoped to an origin: the agents' own, and one of the
		// same host that holds none of them (docs/threats.md K.104).
		claimed, otherOrigin := publisher("mine.example.com"), publisher("mine.example.com")
		claimed.Origin, otherOrigin.Origin = "https://mine.example.com", "http://mine.example.com"
		for _, p := range []registry.Principal{anonymous, reader, publisher("mine.example.com"), publisher(), admin, claimed, otherOrigin} {
			got, _, err := svc.Changes(ctx, p, start, 1000)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]string{}
			for _, c := range got {
				if !submissions[c.Seq] {
					seen[c.Seq] = c.Kind
				}
			}
			for seq, sd := range bySeq {
				var before, after int
				fmt.Sscanf(sd.kind, "k%1d%1d", &before, &after)
				want := ""
				switch {
				case oracle(p, after, sd.host):
					want = sd.kind
				case oracle(p, before, sd.host):
					want = registry.ChangeUnlisted
				}
				if seen[seq] != want {
					t.Errorf("%s%v%s: %s change %d→%d shows as %q, want %q", p.Role, p.Hosts, p.Origin, sd.host, before, after, seen[seq], want)
				}
				delete(seen, seq)
			}
			for seq, k := range seen {
				t.Errorf("%s%v: unexpected change %d %q", p.Role, p.Hosts, seq, k)
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
	if key(publisher()) != key(anonymous) {
		t.Fatal("a publisher without hosts lists more than an anonymous caller")
	}
}
