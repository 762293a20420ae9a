package registry_test

import (
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func ids(as []registry.Agent) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	sort.Strings(out)
	return out
}

func sorted(v ...string) []string { sort.Strings(v); return v }

// TestVisibilityMatrix is docs/api.md "Curation and visibility" for lists and reads by id.
func TestVisibilityMatrix(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		mk := func(host string, vis registry.Visibility, st registry.Status) string {
			a, err := svc.Submit(ctx, admin, "https://"+host+"/", vis)
			if err != nil {
				t.Fatal(err)
			}
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(host, "1"), registry.TrustUnsigned))
			setStatus(t, svc, a.ID, st)
			return a.ID
		}
		ap := mk("a.example.com", registry.VisibilityPublic, registry.StatusApproved)
		ai := mk("b.example.com", registry.VisibilityInternal, registry.StatusApproved)
		pp := mk("p.example.com", registry.VisibilityPublic, registry.StatusPending)
		ag := mk("g.example.com", registry.VisibilityPublic, registry.StatusApproved)
		rm := mk("r.example.com", registry.VisibilityPublic, registry.StatusRemoved)
		sp := mk("s.example.com", registry.VisibilityPublic, registry.StatusSuspended)
		for range 3 { // 3 × 404 → gone
			makeDue(c)
			crawl(t, svc, c, ag, errResult(c.Now(), "http_status", 404))
		}
		if a, _ := svc.Get(ctx, admin, ag); a.Health != registry.HealthGone {
			t.Fatalf("setup: health %s", a.Health)
		}
		pub := publisher("p.example.com", "r.example.com")
		for _, tc := range []struct {
			name string
			p    registry.Principal
			want []string
		}{
			{"anonymous", anonymous, sorted(ap)},
			{"reader", reader, sorted(ap, ai)},
			{"publisher", pub, sorted(ap, pp)},
			{"admin", admin, sorted(ap, ai, pp, ag, rm, sp)},
		} {
			page, err := svc.List(ctx, tc.p, registry.ListQuery{})
			if err != nil || !slices.Equal(ids(page.Agents), tc.want) || page.TotalSize != len(tc.want) {
				t.Errorf("%s lists %v (total %d), %v; want %v", tc.name, ids(page.Agents), page.TotalSize, err, tc.want)
			}
		}
		// Reading by id: anyone holding it, except removed agents (admins
		// only) and internal ones (a reader token, or a publisher token of
		// the agent's host, is needed).
		for _, p := range []registry.Principal{anonymous, reader, pub} {
			for _, id := range []string{ap, ai, pp, ag, sp} {
				_, err := svc.Get(ctx, p, id)
				if id == ai && p.Role != registry.RoleReader {
					if !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("%q Get internal: %v, want not found", p.Role, err)
					}
					if _, _, err := svc.Card(ctx, p, id); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("%q Card internal: %v, want not found", p.Role, err)
					}
					if _, err := svc.Versions(ctx, p, id); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("%q Versions internal: %v, want not found", p.Role, err)
					}
					if _, err := svc.Version(ctx, p, id, 1); !errors.Is(err, registry.ErrNotFound) {
						t.Errorf("%q Version internal: %v, want not found", p.Role, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%q Get %s: %v", p.Role, id, err)
				}
			}
			if _, err := svc.Get(ctx, p, rm); !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("%q Get removed: %v", p.Role, err)
			}
			if _, _, err := svc.Card(ctx, p, rm); !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("%q Card removed: %v", p.Role, err)
			}
			// Filters on status, health and visibility are for admins.
			for _, q := range []registry.ListQuery{{Status: []registry.Status{"pending"}}, {Health: []registry.Health{"ok"}}, {Visibility: []registry.Visibility{"public"}}} {
				if _, err := svc.List(ctx, p, q); !errors.Is(err, registry.ErrForbidden) {
					t.Errorf("%q filtering %+v: %v", p.Role, q, err)
				}
			}
		}
		if a, err := svc.Get(ctx, admin, rm); err != nil || a.Status != registry.StatusRemoved {
			t.Fatalf("admin Get removed: %+v, %v", a, err)
		}
		page, err := svc.List(ctx, anonymous, registry.ListQuery{Trust: []registry.Trust{"unsigned"}})
		if err != nil || !slices.Equal(ids(page.Agents), sorted(ap)) {
			t.Fatalf("anonymous trust filter: %v, %v", ids(page.Agents), err)
		}
		page, err = svc.List(ctx, admin, registry.ListQuery{Status: []registry.Status{"pending", "suspended"}, Health: []registry.Health{"ok"}})
		if err != nil || !slices.Equal(ids(page.Agents), sorted(pp, sp)) {
			t.Fatalf("admin filters: %v, %v", ids(page.Agents), err)
		}
		var ve *registry.ValidationError
		if _, err := svc.List(ctx, admin, registry.ListQuery{Status: []registry.Status{"lost"}}); !errors.As(err, &ve) {
			t.Fatalf("unknown status: %v", err)
		}
		if _, err := svc.List(ctx, admin, registry.ListQuery{Sort: "random"}); !errors.As(err, &ve) {
			t.Fatalf("unknown sort: %v", err)
		}
	})
}

// TestKeysetPagination walks every page while new agents keep arriving: no
// agent is skipped or repeated (docs/threats.md I.82: cursor pagination).
func TestKeysetPagination(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		var want []string
		for i := range 45 {
			if i%3 == 0 {
				c.Advance(time.Second) // runs of equal updated_at exercise the id tiebreak
			}
			want = append(want, mustSubmit(t, svc, "https://k"+itoa(i)+".example.com/").ID)
		}
		sort.Strings(want)
		var got []string
		var prev *registry.Agent
		tok := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("pagination does not end")
			}
			page, err := svc.List(ctx, admin, registry.ListQuery{PageSize: 10, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			for i := range page.Agents {
				a := &page.Agents[i]
				if prev != nil && (a.UpdatedAt.After(prev.UpdatedAt) || a.UpdatedAt.Equal(prev.UpdatedAt) && a.ID > prev.ID) {
					t.Fatalf("order broken: %s/%v after %s/%v", a.ID, a.UpdatedAt, prev.ID, prev.UpdatedAt)
				}
				prev = a
				got = append(got, a.ID)
			}
			// Inserts between pages land before the cursor: not seen, not shifting.
			c.Advance(time.Second)
			mustSubmit(t, svc, "https://new"+itoa(pages)+".example.com/")
			if page.NextPageToken == "" {
				if len(page.Agents) != 5 {
					t.Fatalf("last page has %d agents", len(page.Agents))
				}
				break
			}
			if len(page.Agents) != 10 {
				t.Fatalf("page of %d", len(page.Agents))
			}
			tok = page.NextPageToken
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("walked %d agents, want the %d that existed at the start", len(got), len(want))
		}
		// Tampered or foreign tokens are refused.
		page, _ := svc.List(ctx, admin, registry.ListQuery{PageSize: 10})
		bad := []byte(page.NextPageToken)
		bad[len(bad)/2] ^= 1
		for _, q := range []registry.ListQuery{
			{PageToken: string(bad)},
			{PageToken: "not base64!"},
			{PageToken: page.NextPageToken, Sort: "name"},
			{PageToken: page.NextPageToken, Trust: []registry.Trust{"unsigned"}},
		} {
			if _, err := svc.List(ctx, admin, q); !errors.Is(err, registry.ErrInvalidPageToken) {
				t.Errorf("token %+v: %v", q, err)
			}
		}
		if _, err := svc.List(ctx, reader, registry.ListQuery{PageToken: page.NextPageToken}); !errors.Is(err, registry.ErrInvalidPageToken) {
			t.Errorf("admin token reused by a reader: %v", err)
		}
		// Page size: default 20, clamped to 100.
		if p, _ := svc.List(ctx, admin, registry.ListQuery{}); len(p.Agents) != 20 {
			t.Errorf("default page size %d", len(p.Agents))
		}
		for i := range 60 {
			mustSubmit(t, svc, "https://more"+itoa(i)+".example.com/")
		}
		if p, _ := svc.List(ctx, admin, registry.ListQuery{PageSize: 1000000000}); len(p.Agents) != 100 || p.TotalSize < 105 {
			t.Errorf("clamped page: %d agents, total %d", len(p.Agents), p.TotalSize)
		}
	})
}

func TestListSortByName(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		names := []string{"delta", "alpha", "echo", "charlie", "bravo", "foxtrot", "alpha"}
		for i, n := range names {
			a := mustSubmit(t, svc, "https://n"+itoa(i)+".example.com/")
			crawl(t, svc, c, a.ID, okResult(t, c.Now(), cardJSON(n, "1"), registry.TrustUnsigned))
		}
		var got []string
		tok := ""
		for range 5 {
			page, err := svc.List(t.Context(), admin, registry.ListQuery{Sort: "name", PageSize: 3, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range page.Agents {
				got = append(got, a.Card.Name)
			}
			if tok = page.NextPageToken; tok == "" {
				break
			}
		}
		want := []string{"alpha", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
		if !slices.Equal(got, want) {
			t.Fatalf("name order %v", got)
		}
	})
}
