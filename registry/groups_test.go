package registry_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// TestGroupsVisibilityValidation: groups are required with visibility
// "groups" and refused with any other, within the bounds of
// docs/security.md "Agents for groups", each refusal naming the field;
// admins only.
func TestGroupsVisibilityValidation(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://groups.example.com/agent.json")
		many := make([]string, 33)
		for i := range many {
			many[i] = fmt.Sprint("g", i)
		}
		for _, c := range []struct {
			vis           registry.Visibility
			groups        []string
			pointer, code string
		}{
			{registry.VisibilityGroups, nil, "/groups", "required"},
			{registry.VisibilityPublic, []string{"payments"}, "/groups", "not-allowed"},
			{registry.VisibilityInternal, []string{"payments"}, "/groups", "not-allowed"},
			{registry.VisibilityGroups, many, "/groups", "too-many"},
			{registry.VisibilityGroups, []string{"ok", ""}, "/groups/1", "invalid-group"},
			{registry.VisibilityGroups, []string{"a,b"}, "/groups/0", "invalid-group"},
			{registry.VisibilityGroups, []string{" payments"}, "/groups/0", "invalid-group"},
			{registry.VisibilityGroups, []string{"pay\tments"}, "/groups/0", "invalid-group"},
			{registry.VisibilityGroups, []string{"pay\nments"}, "/groups/0", "invalid-group"},
			{registry.VisibilityGroups, []string{"\xff"}, "/groups/0", "invalid-group"},
			{registry.VisibilityGroups, []string{strings.Repeat("g", 257)}, "/groups/0", "invalid-group"},
			{"secret", nil, "/visibility", "enum"},
		} {
			_, err := svc.SetVisibility(ctx, admin, a.ID, c.vis, c.groups...)
			var ve *registry.ValidationError
			if !asValidation(err, &ve) || ve.Errors[0].Pointer != c.pointer || ve.Errors[0].Code != c.code {
				t.Errorf("%s %q: %v, want %s %s", c.vis, c.groups, err, c.pointer, c.code)
			}
		}
		if _, err := svc.SetVisibility(ctx, holding(reader, "payments"), a.ID, registry.VisibilityGroups, "payments"); !isErr(err, registry.ErrForbidden) {
			t.Errorf("a reader sets visibility: %v", err)
		}
		// Sorted, repeats dropped; inner spaces, paths, non-ASCII and 256
		// bytes allowed.
		long := strings.Repeat("g", 256)
		got, err := svc.SetVisibility(ctx, admin, a.ID, registry.VisibilityGroups, "risk", "/payments", "Zahlungsverkehr Ämter", "risk", long)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"/payments", "Zahlungsverkehr Ämter", long, "risk"}; !slices.Equal(got.Groups, want) {
			t.Errorf("groups %q, want %q", got.Groups, want)
		}
		// Group members read it, without its groups (admins' to know).
		r, err := svc.Get(ctx, holding(reader, "risk"), a.ID)
		if err != nil || r.Groups != nil {
			t.Errorf("a member reads %v, groups %q", err, r.Groups)
		}
		// Back to public drops the groups.
		if got, err = svc.SetVisibility(ctx, admin, a.ID, registry.VisibilityPublic); err != nil || got.Groups != nil {
			t.Errorf("public: %v, groups %q", err, got.Groups)
		}
	})
}

// TestGroupsChangeFeed: the feed shows a change of an agent for groups to
// the members of its groups on the side they could list it, as "unlisted"
// once they cannot, and nothing to callers of no group of it.
func TestGroupsChangeFeed(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a := mustSubmit(t, svc, "https://groups.example.com/agent.json")
		crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON("g", "1"), registry.TrustUnsigned))
		if _, err := svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: seq(1)}); err != nil {
			t.Fatal(err)
		}
		start, err := s.LatestChange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		set := func(v registry.Visibility, groups ...string) {
			t.Helper()
			if _, err := svc.SetVisibility(ctx, admin, a.ID, v, groups...); err != nil {
				t.Fatal(err)
			}
		}
		set(registry.VisibilityGroups, "payments") // public → payments
		set(registry.VisibilityGroups, "risk")     // payments → risk
		set(registry.VisibilityGroups, "risk")     // no change, no row
		set(registry.VisibilityInternal)           // risk → every token
		for _, w := range []struct {
			p    registry.Principal
			want []string
		}{
			{anonymous, []string{"unlisted"}},
			{holding(anonymous, "payments"), []string{"unlisted"}},
			{reader, []string{"unlisted", "visibility"}},
			{holding(reader, "payments"), []string{"visibility", "unlisted", "visibility"}},
			{holding(reader, "risk"), []string{"unlisted", "visibility", "visibility"}},
			{holding(reader, "Risk"), []string{"unlisted", "visibility"}},
			{holding(publisher(), "risk"), []string{"unlisted", "visibility", "unlisted"}},
			{publisher("groups.example.com"), []string{"visibility", "visibility", "visibility"}},
			{admin, []string{"visibility", "visibility", "visibility"}},
		} {
			cs, _, err := svc.Changes(ctx, w.p, start, 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				got = append(got, c.Kind)
			}
			if !slices.Equal(got, w.want) {
				t.Errorf("%s%v%v: feed %q, want %q", w.p.Role, w.p.Hosts, w.p.Groups, got, w.want)
			}
		}
	})
}

// TestGroupsToken: a token made with groups authenticates as a caller
// holding them, sorted; admin tokens take none, and names are checked as
// an agent's are.
func TestGroupsToken(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		svc := newService(s, newClock())
		ctx := t.Context()
		secret, tok, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleReader, Groups: []string{"risk", "payments", "risk"}})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"payments", "risk"}; !slices.Equal(tok.Groups, want) {
			t.Errorf("token groups %q", tok.Groups)
		}
		p, err := svc.Authenticate(ctx, secret)
		if err != nil || !slices.Equal(p.Groups, []string{"payments", "risk"}) || p.Role != registry.RoleReader {
			t.Errorf("authenticated %+v %v", p, err)
		}
		_, plain, err := svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleReader})
		if err != nil || plain.Groups == nil || len(plain.Groups) != 0 {
			t.Errorf("no groups: %q %v", plain.Groups, err)
		}
		for _, c := range []struct {
			req           registry.TokenRequest
			pointer, code string
		}{
			{registry.TokenRequest{Role: registry.RoleAdmin, Groups: []string{"payments"}}, "/groups", "not-allowed"},
			{registry.TokenRequest{Role: registry.RoleReader, Groups: []string{"a,b"}}, "/groups/0", "invalid-group"},
			{registry.TokenRequest{Role: registry.RolePublisher, Hosts: []string{"a.example.com"}, Groups: []string{""}}, "/groups/0", "invalid-group"},
		} {
			_, _, err := svc.CreateToken(ctx, c.req)
			var ve *registry.ValidationError
			if !asValidation(err, &ve) || ve.Errors[0].Pointer != c.pointer || ve.Errors[0].Code != c.code {
				t.Errorf("%+v: %v, want %s %s", c.req, err, c.pointer, c.code)
			}
		}
	})
}
