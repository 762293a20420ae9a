package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
	forMyGroup := listedByAll && inMyGroup(p, a)
	switch p.Role {
	case registry.RoleAdmin:
		return true
	case registry.RoleReader:
		return (listedByAll && a.Visibility != registry.VisibilityGroups) || forMyGroup
	case registry.RolePublisher:
		// Claim-issued or operator-made alike: the anonymous listing plus
		// its own hosts, never another host's internal agent.
		// A claim's token that named a port or scheme: its origin only.
		return public || forMyGroup || (slices.Contains(p.Hosts, a.Host) && a.Status != registry.StatusRemoved &&
			(p.Origin == "" || cardurl.Origin(a.CardURL) == p.Origin))
	}
	return public
}

// inMyGroup: a is for groups and p, not anonymous, holds one of them,
// compared exactly.
func inMyGroup(p registry.Principal, a registry.Agent) bool {
	if p.Role == "" || a.Visibility != registry.VisibilityGroups {
		return false
	}
	for _, g := range p.Groups {
		if slices.Contains(a.Groups, g) && !strings.ContainsAny(g, ",\n") {
			return true
		}
	}
	return false
}

// holding is a caller of role holding groups.
func holding(p registry.Principal, groups ...string) registry.Principal {
	p.Groups = groups
	return p
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
	owner := p.Role == registry.RolePublisher && slices.Contains(p.Hosts, a.Host) &&
		(p.Origin == "" || cardurl.Origin(a.CardURL) == p.Origin)
	if a.Visibility == registry.VisibilityGroups {
		return owner || inMyGroup(p, a)
	}
	return p.Role == registry.RoleReader || owner
}

// groupCallers are callers holding groups, beside those without: readers
// of each group and of none of the agents' (case differs), a publisher of
// no host holding one, and an anonymous caller whose Groups are ignored.
var groupCallers = []registry.Principal{holding(reader, "payments"), holding(reader, "Risk"), holding(reader, "PAYMENTS", "risk"),
	holding(publisher(), "payments"), holding(publisher("mine.example.com"), "Risk"), holding(anonymous, "payments"),
	// A name no agent can have is never held (a line break would join two).
	holding(reader, "Risk\npayments-eu", "a,b")}

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
			for _, vis := range []registry.Visibility{registry.VisibilityPublic, registry.VisibilityInternal, registry.VisibilityGroups} {
				for _, h := range []registry.Health{registry.HealthUnknown, registry.HealthOK, registry.HealthFailing, registry.HealthGone} {
					for _, origin := range []string{"https://mine.example.com", "http://mine.example.com", "https://other.example.com"} {
						n++
						a, err := svc.Submit(ctx, admin, fmt.Sprintf("%s/agent%d.json", origin, n), "")
						if err != nil {
							t.Fatal(err)
						}
						var groups []string
						if vis == registry.VisibilityGroups {
							groups = [][]string{{"payments"}, {"Risk", "payments-eu"}}[n%2]
							if _, err := svc.SetVisibility(ctx, admin, a.ID, vis, groups...); err != nil {
								t.Fatal(err)
							}
						}
						if err := s.WriteDB().Exec("UPDATE agents SET status = ?, visibility = ?, health = ? WHERE id = ?", st, vis, h, a.ID).Error; err != nil {
							t.Fatal(err)
						}
						a.Status, a.Visibility, a.Health, a.Groups = st, vis, h, groups
						agents = append(agents, *a)
					}
				}
			}
		}
		claimed := publisher("mine.example.com")
		claimed.Origin = "https://mine.example.com"
		for _, p := range append([]registry.Principal{anonymous, reader, admin, publisher("mine.example.com"), publisher(), claimed}, groupCallers...) {
			name := string(p.Role) + fmt.Sprint(p.Hosts) + p.Origin + fmt.Sprint(p.Groups)
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
		for _, p := range append([]registry.Principal{anonymous, reader, admin, publisher("mine.example.com"), publisher(), claimed}, groupCallers...) {
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
				if c.Kind != registry.ChangeSubmitted && c.Kind != registry.ChangeVisibility {
					t.Errorf("%s%v: old change shows as %q", p.Role, p.Hosts, c.Kind)
				}
				if c.Kind == registry.ChangeSubmitted {
					got = append(got, c.AgentID)
				}
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
			// Reach 1 (its host's publishers) with or without the groups
			// that listed the agent on that side (migration 00190).
			groupsOf := func(r int) []string {
				if r == 1 {
					return []string{"-", "p", "r"}
				}
				return []string{"-"}
			}
			for before := range 4 {
				for after := range 4 {
					for _, gb := range groupsOf(before) {
						for _, ga := range groupsOf(after) {
							if err := s.WriteDB().Exec("INSERT INTO changes (agent_id, kind, at, reach_before, reach_after, groups_before, groups_after) VALUES (?, ?, ?, ?, ?, ?, ?)",
								a.ID, fmt.Sprintf("k%d%d%s%s", before, after, gb, ga), time.Now(), before, after, encGroups[gb], encGroups[ga]).Error; err != nil {
								t.Fatal(err)
							}
						}
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
		if len(bySeq) != 2*36 {
			t.Fatalf("admin sees %d of the %d rows", len(bySeq), 2*36)
		}
		oracle := func(p registry.Principal, r int, g, h string) bool {
			mine := p.Role != "" && g != "-" && slices.ContainsFunc(p.Groups, func(x string) bool { return slices.Contains(nameGroups[g], x) })
			switch p.Role {
			case registry.RoleAdmin:
				return true
			case registry.RoleReader:
				return r >= 2 || mine
			case registry.RolePublisher:
				return r >= 3 || mine || (r >= 1 && slices.Contains(p.Hosts, h) && (p.Origin == "" || p.Origin == "https://"+h))
			}
			return r >= 3
		}
		// Claims' tokens scoped to an origin: the agents' own, and one of the
		// same host that holds none of them (docs/threats.md K.104).
		claimed, otherOrigin := publisher("mine.example.com"), publisher("mine.example.com")
		claimed.Origin, otherOrigin.Origin = "https://mine.example.com", "http://mine.example.com"
		for _, p := range append([]registry.Principal{anonymous, reader, publisher("mine.example.com"), publisher(), admin, claimed, otherOrigin}, groupCallers...) {
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
				var gb, ga string
				fmt.Sscanf(sd.kind, "k%1d%1d%1s%1s", &before, &after, &gb, &ga)
				want := ""
				switch {
				case oracle(p, after, ga, sd.host):
					want = sd.kind
				case oracle(p, before, gb, sd.host):
					want = registry.ChangeUnlisted
				}
				if seen[seq] != want {
					t.Errorf("%s%v%s%v: %s change %d%s→%d%s shows as %q, want %q", p.Role, p.Hosts, p.Origin, p.Groups, sd.host, before, gb, after, ga, seen[seq], want)
				}
				delete(seen, seq)
			}
			for seq, k := range seen {
				t.Errorf("%s%v: unexpected change %d %q", p.Role, p.Hosts, seq, k)
			}
		}
	})
}

// The groups of the change-log rows of TestChangeFeedRuleAgrees, by the
// letter in their kind, and their stored form (migration 00190).
var (
	nameGroups = map[string][]string{"-": nil, "p": {"payments"}, "r": {"Risk", "payments-eu"}}
	encGroups  = map[string]string{"-": "", "p": "\npayments\n", "r": "\nRisk\npayments-eu\n"}
)

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
	for _, p := range []registry.Principal{anonymous, reader, admin, publisher("a.example.com"), publisher("b.example.com"),
		holding(reader, "payments"), holding(reader, "Payments"), holding(reader, "payments", "risk"), holding(publisher("a.example.com"), "payments")} {
		k := key(p)
		if prev, ok := seen[k]; ok {
			t.Fatalf("%v and %s share key %q", p, prev, k)
		}
		seen[k] = fmt.Sprint(p)
	}
	if key(holding(reader, "risk", "payments")) != key(holding(reader, "payments", "risk")) {
		t.Fatal("group order changes the key")
	}
	if key(holding(anonymous, "payments")) != key(anonymous) {
		t.Fatal("an anonymous caller's groups count")
	}
	if key(publisher()) != key(anonymous) {
		t.Fatal("a publisher without hosts lists more than an anonymous caller")
	}
}
