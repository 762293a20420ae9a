package registry_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Submitting a bare host adds its well-known catalog; a crawl of it
// registers the agents it lists as pending agents that remember it, once.
func TestCatalogRegistersAgents(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		if _, err := svc.Submit(ctx, anonymous, "acme.example.com", ""); err != nil {
			t.Fatal(err)
		}
		// A full card URL adds no catalog.
		if _, err := svc.Submit(ctx, anonymous, "https://other.example.org/.well-known/agent-card.json", ""); err != nil {
			t.Fatal(err)
		}
		due, err := svc.DueCatalogs(ctx, c.Now(), time.Minute, 10)
		if err != nil || len(due) != 1 || due[0].URL != "https://acme.example.com/.well-known/ai-catalog.json" || due[0].Domain != "" {
			t.Fatalf("due %+v %v", due, err)
		}
		// Leased: not due again at once.
		if again, _ := svc.DueCatalogs(ctx, c.Now(), time.Minute, 10); len(again) != 0 {
			t.Fatalf("due twice: %+v", again)
		}
		cat := due[0].URL
		trace := json.RawMessage(`{"entries":[{"outcome":"agent"}]}`)
		rec, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, Domain: "example.com", ETag: `"v1"`, Trace: trace, NextCrawlAt: c.Now().Add(time.Hour),
			Agents: []registry.CatalogAgent{{URL: "https://a2a.acme.example.com/fx/card.json"}, {URL: "https://acme.example.com/"}, {URL: "not a url"},
				{URL: "https://acme.example.com/", Identifier: "inline", Card: []byte(`{}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Registered
		// acme.example.com/ is the agent submitted above: left alone; an
		// inline entry on a bare host's URL names no document.
		if len(ids) != 1 {
			t.Fatalf("registered %v", ids)
		}
		a, err := svc.Get(ctx, admin, ids[0])
		if err != nil || a.Catalog != cat || a.Status != registry.StatusPending || a.CardURL != "https://a2a.acme.example.com/fx/card.json" {
			t.Fatalf("agent %+v %v", a, err)
		}
		rec2, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, NotModified: true, NextCrawlAt: c.Now().Add(time.Hour),
			Agents: []registry.CatalogAgent{{URL: "https://a2a.acme.example.com/fx/card.json"}}})
		if err != nil || len(rec2.Registered) != 0 {
			t.Fatalf("second crawl: %v %v", rec2, err)
		}
		list, err := svc.Catalogs(ctx, admin)
		if err != nil || len(list) != 1 || string(list[0].Trace) != string(trace) || list[0].LastCrawledAt == nil || list[0].Domain != "example.com" {
			t.Fatalf("catalogs %+v %v", list, err)
		}
		if _, err := svc.Catalogs(ctx, anonymous); err == nil {
			t.Fatal("an anonymous caller listed catalogs")
		}
	})
}
