package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// TestGroupsVisibilityPatch: PATCH takes visibility "groups" with its
// groups (admins only), answers the record with them to admins, and
// refuses a missing, misplaced or malformed groups field with a
// problem+json naming it (docs/security.md "Agents for groups"). The agent
// then reads only for token holders of one of its groups, its host's
// publisher and admins, without its groups to anyone but admins.
func TestGroupsVisibilityPatch(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		reader := h.token(registry.RoleReader)
		owner := h.token(registry.RolePublisher, "grp.example.com")
		tok := func(groups ...string) string {
			secret, _, err := h.svc.CreateToken(h.ctx(), registry.TokenRequest{Role: registry.RoleReader, Groups: groups})
			if err != nil {
				t.Fatal(err)
			}
			return secret
		}
		payments, risk, upper := tok("payments"), tok("risk"), tok("Payments")
		a := h.submit("https://grp.example.com/", "")
		h.fetch(a.ID, h.cardBytes(cardCurrency))
		path := "/api/v1/agents/" + a.ID

		for _, c := range []struct{ body, pointer, code string }{
			{`{"visibility":"groups"}`, "/groups", "required"},
			{`{"visibility":"groups","groups":[]}`, "/groups", "required"},
			{`{"visibility":"groups","groups":null}`, "/groups", "required"},
			{`{"visibility":"public","groups":["payments"]}`, "/groups", "not-allowed"},
			{`{"visibility":"internal","groups":["payments"]}`, "/groups", "not-allowed"},
			{`{"visibility":"groups","groups":["a,b"]}`, "/groups/0", "invalid-group"},
			{`{"visibility":"groups","groups":["ok",""]}`, "/groups/1", "invalid-group"},
			{`{"visibility":"groups","groups":["` + strings.Repeat("g", 257) + `"]}`, "/groups/0", "invalid-group"},
			{`{"visibility":"groups","groups":["` + strings.Repeat(`x","`, 32) + `y"]}`, "/groups", "too-many"},
			{`{"visibility":"groups","groups":"payments"}`, "/groups", "type"},
			{`{"visibility":"everyone"}`, "/visibility", "enum"},
		} {
			p := h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(c.body)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(p.Errors) != 1 || p.Errors[0].Pointer != c.pointer || p.Errors[0].Code != c.code {
				t.Errorf("%s: errors %+v, want %s %s", c.body, p.Errors, c.pointer, c.code)
			}
		}
		for _, tk := range []string{"", reader, payments, owner} {
			h.do(req{method: "PATCH", path: path, token: tk, body: jsonBody(`{"visibility":"groups","groups":["payments"]}`)}).
				expectStatus(t, map[bool]int{true: http.StatusUnauthorized, false: http.StatusForbidden}[tk == ""])
		}

		var got agentView
		r := h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"visibility":"groups","groups":["risk","payments"]}`)})
		r.expectStatus(t, http.StatusOK)
		r.json(t, &got)
		if got.Visibility != registry.VisibilityGroups || !slices.Equal(got.Groups, []string{"payments", "risk"}) {
			t.Fatalf("visibility %q groups %q", got.Visibility, got.Groups)
		}
		for _, p := range []string{path, path + "/card", path + "/versions", path + "/versions/1"} {
			for _, tk := range []string{"", reader, upper} {
				h.do(req{method: "GET", path: p, token: tk}).expectProblem(t, http.StatusNotFound, "not-found")
			}
			for _, tk := range []string{payments, risk, owner, admin} {
				h.do(req{method: "GET", path: p, token: tk}).expectStatus(t, http.StatusOK)
			}
		}
		// Its groups are the admins' to know.
		var seen agentView
		h.do(req{method: "GET", path: path, token: payments}).json(t, &seen)
		if seen.Groups != nil || !strings.Contains(string(h.do(req{method: "GET", path: path, token: admin}).body), `"groups":["payments","risk"]`) {
			t.Errorf("a member sees groups %q", seen.Groups)
		}
		// Back to internal: every token reads it, and the groups are gone.
		r = h.do(req{method: "PATCH", path: path, token: admin, body: jsonBody(`{"visibility":"internal"}`)})
		r.expectStatus(t, http.StatusOK)
		got = agentView{}
		r.json(t, &got)
		if got.Groups != nil {
			t.Errorf("internal keeps groups %q", got.Groups)
		}
		h.do(req{method: "GET", path: path, token: reader}).expectStatus(t, http.StatusOK)
	})
}

// TestGroupsTokenListed: GET /api/v1/tokens shows the groups a token holds,
// [] for none.
func TestGroupsTokenListed(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		if _, _, err := h.svc.CreateToken(h.ctx(), registry.TokenRequest{Role: registry.RoleReader, Name: "pay", Groups: []string{"payments"}}); err != nil {
			t.Fatal(err)
		}
		var toks struct {
			Tokens []registry.Token `json:"tokens"`
		}
		h.do(req{method: "GET", path: "/api/v1/tokens", token: admin}).json(t, &toks)
		groups := map[string][]string{}
		for _, tk := range toks.Tokens {
			groups[string(tk.Role)] = tk.Groups
		}
		if !slices.Equal(groups["reader"], []string{"payments"}) || groups["admin"] == nil || len(groups["admin"]) != 0 {
			t.Errorf("token groups %q", groups)
		}
	})
}
