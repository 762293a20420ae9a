package web_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// TestGroupsVisibilityForm: the agent admin page's groups form makes an
// agent for groups (docs/security.md "Agents for groups"), shows them
// back, and explains a refusal; the agent page then answers 404 to
// anonymous visitors, as an internal agent's does.
func TestGroupsVisibilityForm(t *testing.T) {
	e := newEnv(t)
	tok := e.adminToken()
	a := &registry.Agent{ID: e.listed("grp.example.com", "currency.json")}
	post := func(vals url.Values) response {
		return e.do("POST", "/admin/agents/"+a.ID+"/visibility", vals, e.asAdmin(tok))
	}
	d := parse(t, e.do("GET", "/admin/agents/"+a.ID, nil, e.asAdmin(tok)))
	if got, _ := attr(d.one("#visibility-groups"), "action"); got != "/admin/agents/"+a.ID+"/visibility" {
		t.Fatalf("groups form action %q", got)
	}
	r := post(url.Values{"visibility": {"groups"}, "groups": {" , "}})
	wantStatus(t, r, 400)
	if got := parse(t, r).text("#action-error"); got != `The visibility was not changed: visibility "groups" needs at least one group.` {
		t.Errorf("no groups: %q", got)
	}
	wantStatus(t, post(url.Values{"visibility": {"groups"}, "groups": {"risk, payments\n/Team A"}}), 303)
	got, _ := e.svc.Get(t.Context(), registry.Principal{Role: registry.RoleAdmin}, a.ID)
	if got.Visibility != registry.VisibilityGroups || !slices.Equal(got.Groups, []string{"/Team A", "payments", "risk"}) {
		t.Fatalf("visibility %s groups %q", got.Visibility, got.Groups)
	}
	d = parse(t, e.do("GET", "/admin/agents/"+a.ID, nil, e.asAdmin(tok)))
	if v, _ := attr(d.one("#groups"), "value"); v != "/Team A, payments, risk" {
		t.Errorf("groups shown as %q", v)
	}
	if b := string(e.do("GET", "/admin/audit", nil, e.asAdmin(tok)).body); !strings.Contains(b, "visibility groups: /Team A, payments, risk") {
		t.Error("the audit page does not name the groups")
	}
	e.sync()
	wantStatus(t, e.get("/agents/"+a.ID), 404)
	if strings.Contains(string(e.get("/?q=currency").body), a.ID) {
		t.Error("the catalogue lists an agent for groups to anonymous visitors")
	}
	r = e.do("GET", "/agents/"+a.ID, nil, e.asAdmin(tok))
	wantStatus(t, r, 200)
	if b := string(r.body); !strings.Contains(b, `<span class="badge">for groups</span>`) ||
		!strings.Contains(b, "not listed for anonymous visitors (for groups: /Team A, payments, risk)") {
		t.Error("the agent page does not say the agent is for groups")
	}
	// The toggle beside it makes it public again, without groups.
	wantStatus(t, post(url.Values{"visibility": {"public"}}), 303)
	if got, _ = e.svc.Get(t.Context(), registry.Principal{Role: registry.RoleAdmin}, a.ID); got.Groups != nil {
		t.Errorf("public keeps groups %q", got.Groups)
	}
	e.sync()
	wantStatus(t, e.get("/agents/"+a.ID), 200)
	if !strings.Contains(string(e.get("/?q=currency").body), a.ID) {
		t.Error("the catalogue does not list the agent once public")
	}
}

// TestGroupsTokenForm: the tokens page makes a reader token holding groups
// and lists them.
func TestGroupsTokenForm(t *testing.T) {
	e := newEnv(t)
	tok := e.adminToken()
	r := e.do("POST", "/admin/tokens", url.Values{"role": {"reader"}, "name": {"pay-reader"}, "groups": {"payments, risk"}}, e.asAdmin(tok))
	wantStatus(t, r, 201)
	p, err := e.svc.Authenticate(t.Context(), parse(t, r).text("#secret"))
	if err != nil || !slices.Equal(p.Groups, []string{"payments", "risk"}) {
		t.Fatalf("the token authenticates as %+v, %v", p, err)
	}
	r = e.do("POST", "/admin/tokens", url.Values{"role": {"admin"}, "groups": {"payments"}}, e.asAdmin(tok))
	wantStatus(t, r, 400)
	if got := parse(t, r).text("#token-error"); got != "The token was not created: an admin token sees every agent and holds no groups." {
		t.Errorf("admin with groups: %q", got)
	}
	d := parse(t, e.do("GET", "/admin/tokens", nil, e.asAdmin(tok)))
	found := false
	for _, row := range d.all("tr.token") {
		if strings.Contains(text(row), "pay-reader") && strings.Contains(text(row), "payments, risk") {
			found = true
		}
	}
	if !found {
		t.Error("the token list does not show the token's groups")
	}
}
