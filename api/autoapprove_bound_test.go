package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
)

// Automatic approvals are bounded per registrable domain and UTC day
// (docs/claims.md, docs/threats.md K.97). Under --auto-approve verified
// with a bound of 2, four agents signed under one host's own key get 2
// approvals; the other 2 stay pending, and the curators see why in the API
// record, the review queue's data and one audit entry each. Another
// domain's agent is approved as before. The next day the held ones are
// approved at their next good fetch. On today's code all five were
// approved at once (999 of 999 in the attack).
func TestAutoApproveDailyBoundPerDomain(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveVerified, func(c *registry.ServiceConfig) { c.AutoApprovePerDomain = 2 })
		admin := registry.Principal{Role: registry.RoleAdmin}
		adminTok := e.token(registry.RoleAdmin)
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, Signer: fleetSigner})
		flood, other := fleet.Hosts()[0], fleet.Hosts()[1]
		var ids []string
		for range 4 {
			ids = append(ids, e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: flood}).URL(), "").ID)
		}
		bystander := e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: other}).URL(), "").ID
		e.crawl(5)

		var approved, held []string
		for _, id := range ids {
			r := e.do(req{method: "GET", path: "/api/v1/agents/" + id, token: adminTok})
			r.expectStatus(t, http.StatusOK)
			var a registry.Agent
			r.json(t, &a)
			switch {
			case a.Trust != registry.TrustVerified || a.Health != registry.HealthOK:
				t.Fatalf("%s: trust %s health %s", id, a.Trust, a.Health)
			case a.Status == registry.StatusApproved && a.AutoApproveHeld == "":
				approved = append(approved, id)
			case a.Status == registry.StatusPending && strings.Contains(a.AutoApproveHeld, "the 2 agents of "+a.Host+" it approves per day"):
				held = append(held, id)
			default:
				t.Fatalf("%s: status %s, held %q", id, a.Status, a.AutoApproveHeld)
			}
		}
		if len(approved) != 2 || len(held) != 2 {
			t.Fatalf("approved %v, held %v", approved, held)
		}
		if a, err := e.svc.Get(e.ctx(), admin, bystander); err != nil || a.Status != registry.StatusApproved {
			t.Fatalf("another domain's agent: %+v %v", a, err)
		}
		// The review queue's rows carry the reason.
		page, err := e.svc.List(e.ctx(), admin, registry.ListQuery{Status: []registry.Status{registry.StatusPending}})
		if err != nil || len(page.Agents) != 2 || page.Agents[0].AutoApproveHeld == "" || page.Agents[1].AutoApproveHeld == "" {
			t.Fatalf("pending list %+v %v", page, err)
		}
		auditHeld := func() map[string]string {
			t.Helper()
			log, err := e.svc.AuditLog(e.ctx(), admin, registry.AuditQuery{Actions: []string{registry.ActionAutoApproveHeld}})
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, a := range log.Entries {
				if _, dup := out[a.AgentID]; dup || a.ActorName != "auto-approve" || a.Detail["rule"] != "verified" || a.Detail["to"] != "pending" {
					t.Fatalf("held audit entry %+v", a)
				}
				out[a.AgentID], _ = a.Detail["reason"].(string)
			}
			return out
		}
		if got := auditHeld(); len(got) != 2 || got[held[0]] == "" || got[held[1]] == "" {
			t.Fatalf("held audit entries %v", got)
		}

		// Fetched again the same day: still held, no second audit entry.
		for _, id := range held {
			if _, err := e.svc.RequestCrawl(e.ctx(), admin, id); err != nil {
				t.Fatal(err)
			}
		}
		e.crawl(2)
		if got := auditHeld(); len(got) != 2 {
			t.Fatalf("held audit entries after a second fetch %v", got)
		}
		for _, id := range held {
			if a, _ := e.svc.Get(e.ctx(), admin, id); a.Status != registry.StatusPending {
				t.Fatalf("%s approved on the same day", id)
			}
		}

		// The next UTC day: the held agents are approved at their next
		// good fetch, and the reason is cleared.
		e.svcClock.Advance(24 * time.Hour)
		for _, id := range held {
			if _, err := e.svc.RequestCrawl(e.ctx(), admin, id); err != nil {
				t.Fatal(err)
			}
		}
		due, err := e.svc.CountDue(e.ctx(), e.svcClock.Now())
		if err != nil {
			t.Fatal(err)
		}
		e.crawl(due)
		for _, id := range held {
			if a, _ := e.svc.Get(e.ctx(), admin, id); a.Status != registry.StatusApproved || a.AutoApproveHeld != "" {
				t.Fatalf("%s the next day: status %s held %q", id, a.Status, a.AutoApproveHeld)
			}
		}
	})
}
