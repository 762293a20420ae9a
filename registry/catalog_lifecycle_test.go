package registry_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// catalogAudits counts the audit entries with this action.
func catalogAudits(t *testing.T, svc *registry.Service, action string) int {
	t.Helper()
	page, err := svc.AuditLog(t.Context(), admin, registry.AuditQuery{Actions: []string{action}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Entries)
}

// A catalog is paused, resumed and removed by admins only, each change
// audited once; paused and removed catalogs are never due and record no
// crawl; removing one leaves the agents it brought, with their provenance.
func TestCatalogLifecycle(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		mustSubmit(t, svc, "acme.example.com")
		list, err := svc.Catalogs(ctx, admin)
		if err != nil || len(list) != 1 || list[0].ID == "" || list[0].Status != registry.CatalogActive || list[0].Health != registry.HealthUnknown {
			t.Fatalf("catalogs %+v %v", list, err)
		}
		cat := list[0]
		record := func(agents ...registry.CatalogAgent) registry.CatalogRecord {
			t.Helper()
			r, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat.URL, Domain: "example.com", Trace: json.RawMessage(`{}`),
				Agents: agents, Complete: true, NextCrawlAt: c.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		fx := registry.CatalogAgent{URL: "https://acme.example.com/fx.json", Queries: []string{"convert money"}}
		if r := record(fx); len(r.Registered) != 1 {
			t.Fatalf("registered %+v", r)
		}
		agentID := record(fx).Registered // none new
		if len(agentID) != 0 {
			t.Fatalf("registered twice: %v", agentID)
		}
		list, _ = svc.Catalogs(ctx, admin)
		if list[0].Agents != 1 || list[0].Health != registry.HealthOK {
			t.Fatalf("after a crawl: %+v", list[0])
		}
		if _, err := svc.PauseCatalog(ctx, anonymous, cat.ID); !errors.Is(err, registry.ErrUnauthorized) {
			t.Fatalf("anonymous paused: %v", err)
		}
		for _, p := range []registry.Principal{reader, publisher("acme.example.com")} {
			if _, err := svc.PauseCatalog(ctx, p, cat.ID); !errors.Is(err, registry.ErrForbidden) {
				t.Fatalf("%+v paused: %v", p, err)
			}
		}
		if _, err := svc.PauseCatalog(ctx, admin, "nope"); !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("unknown catalog: %v", err)
		}
		for range 2 {
			got, err := svc.PauseCatalog(ctx, admin, cat.ID)
			if err != nil || got.Status != registry.CatalogPaused {
				t.Fatalf("pause: %+v %v", got, err)
			}
		}
		if n := catalogAudits(t, svc, registry.ActionCatalogPause); n != 1 {
			t.Fatalf("%d pause audit entries, want 1", n)
		}
		if due, _ := svc.DueCatalogs(ctx, c.Now().Add(48*time.Hour), time.Minute, 10); len(due) != 0 {
			t.Fatalf("a paused catalog is due: %+v", due)
		}
		// A crawl that ends after the pause records nothing.
		if r := record(registry.CatalogAgent{URL: "https://acme.example.com/new.json"}); len(r.Registered) != 0 {
			t.Fatalf("a paused catalog registered %+v", r)
		}
		for range 2 {
			got, err := svc.ResumeCatalog(ctx, admin, cat.ID)
			if err != nil || got.Status != registry.CatalogActive {
				t.Fatalf("resume: %+v %v", got, err)
			}
		}
		if n := catalogAudits(t, svc, registry.ActionCatalogResume); n != 1 {
			t.Fatalf("%d resume audit entries, want 1", n)
		}
		if due, _ := svc.DueCatalogs(ctx, c.Now(), time.Minute, 10); len(due) != 1 || due[0].ID != cat.ID {
			t.Fatalf("a resumed catalog is due at once: %+v", due)
		}
		for range 2 {
			got, err := svc.RemoveCatalog(ctx, admin, cat.ID)
			if err != nil || got.Status != registry.CatalogRemoved || got.Agents != 1 {
				t.Fatalf("remove: %+v %v", got, err)
			}
		}
		audits, err := svc.AuditLog(ctx, admin, registry.AuditQuery{Actions: []string{registry.ActionCatalogRemove}, Limit: 10})
		if err != nil || len(audits.Entries) != 1 || audits.Entries[0].Detail["agentsKept"] != float64(1) || audits.Entries[0].Detail["catalogId"] != cat.ID {
			t.Fatalf("remove audit %+v %v", audits, err)
		}
		if _, err := svc.ResumeCatalog(ctx, admin, cat.ID); !errors.Is(err, registry.ErrInvalidTransition) {
			t.Fatalf("resumed a removed catalog: %v", err)
		}
		if _, err := svc.PauseCatalog(ctx, admin, cat.ID); !errors.Is(err, registry.ErrInvalidTransition) {
			t.Fatalf("paused a removed catalog: %v", err)
		}
		if due, _ := svc.DueCatalogs(ctx, c.Now().Add(48*time.Hour), time.Minute, 10); len(due) != 0 {
			t.Fatalf("a removed catalog is due: %+v", due)
		}
		// The removed catalog lists nothing now: its agent is not marked
		// missing and keeps its provenance and queries.
		if r := record(); len(r.Missing) != 0 {
			t.Fatalf("a removed catalog withdrew %+v", r)
		}
		page, err := svc.List(ctx, admin, registry.ListQuery{})
		if err != nil || len(page.Agents) != 2 {
			t.Fatalf("agents %+v %v", page, err)
		}
		var a *registry.Agent
		for _, x := range page.Agents {
			if x.CardURL == fx.URL {
				a, err = svc.Get(ctx, admin, x.ID)
			}
		}
		if err != nil || a == nil || a.Catalog != cat.URL || a.CatalogMissing || len(a.CatalogQueries) != 1 {
			t.Fatalf("agent after removal %+v %v", a, err)
		}
	})
}

// A catalog's failed crawls make it failing and then gone by the agents'
// rule: three consecutive 404s, or failing for GoneAfter. A gone catalog
// is not due; resuming it makes it due at once with its failures
// forgotten, and a crawl that reads it makes it ok.
func TestCatalogGone(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, GoneAfter: 10 * time.Hour})
		ctx := t.Context()
		mustSubmit(t, svc, "acme.example.com")
		mustSubmit(t, svc, "beta.example.com")
		list, _ := svc.Catalogs(ctx, admin)
		acme, beta := list[0], list[1]
		fail := func(url string, status int) registry.Catalog {
			t.Helper()
			if _, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: url, Error: "fetch failed", ErrorClass: "http_status",
				HTTPStatus: status, NextCrawlAt: c.Now()}); err != nil {
				t.Fatal(err)
			}
			for _, cat := range mustCatalogs(t, svc) {
				if cat.URL == url {
					return cat
				}
			}
			t.Fatalf("%s not listed", url)
			return registry.Catalog{}
		}
		for i, want := range []registry.Health{registry.HealthFailing, registry.HealthFailing, registry.HealthGone} {
			got := fail(acme.URL, 404)
			if got.Health != want || got.ConsecutiveFailures != i+1 || got.LastError != "fetch failed" || got.FailingSince == nil {
				t.Fatalf("404 #%d: %+v", i+1, got)
			}
		}
		// 500s are not missing: failing until GoneAfter has passed.
		if got := fail(beta.URL, 500); got.Health != registry.HealthFailing {
			t.Fatalf("500: %+v", got)
		}
		c.Advance(9 * time.Hour)
		if got := fail(beta.URL, 500); got.Health != registry.HealthFailing {
			t.Fatalf("500 after 9h: %+v", got)
		}
		c.Advance(time.Hour)
		if got := fail(beta.URL, 500); got.Health != registry.HealthGone || got.Status != registry.CatalogActive {
			t.Fatalf("500 after 10h: %+v", got)
		}
		if due, _ := svc.DueCatalogs(ctx, c.Now().Add(48*time.Hour), time.Minute, 10); len(due) != 0 {
			t.Fatalf("a gone catalog is due: %+v", due)
		}
		got, err := svc.ResumeCatalog(ctx, admin, acme.ID)
		if err != nil || got.Health != registry.HealthUnknown || got.ConsecutiveFailures != 0 || got.FailingSince != nil {
			t.Fatalf("resume a gone catalog: %+v %v", got, err)
		}
		if n := catalogAudits(t, svc, registry.ActionCatalogResume); n != 1 {
			t.Fatalf("%d resume audit entries, want 1", n)
		}
		if due, _ := svc.DueCatalogs(ctx, c.Now(), time.Minute, 10); len(due) != 1 || due[0].ID != acme.ID {
			t.Fatalf("due after resume: %+v", due)
		}
		if _, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: acme.URL, NotModified: true, NextCrawlAt: c.Now()}); err != nil {
			t.Fatal(err)
		}
		if l := mustCatalogs(t, svc); l[0].Health != registry.HealthOK || l[0].LastError != "" {
			t.Fatalf("after a good crawl: %+v", l[0])
		}
	})
}

func mustCatalogs(t *testing.T, svc *registry.Service) []registry.Catalog {
	t.Helper()
	list, err := svc.Catalogs(t.Context(), admin)
	if err != nil {
		t.Fatal(err)
	}
	return list
}
