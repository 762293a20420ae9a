package registry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// docs/discovery.md "Provenance": a crawl stores where each agent came
// from (migration 00210), a later crawl that lists it differently updates
// it, and a lookup by the publisher's identifier finds only what the
// caller may list.
func TestCatalogSourceProvenance(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		cat := "https://acme.example.com/.well-known/ai-catalog.json"
		crawl := func(a registry.CatalogAgent) registry.CatalogRecord {
			t.Helper()
			rec, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, Domain: "example.com", Complete: true,
				NextCrawlAt: c.Now().Add(time.Hour), Agents: []registry.CatalogAgent{a}})
			if err != nil {
				t.Fatal(err)
			}
			return rec
		}
		rec := crawl(registry.CatalogAgent{URL: "https://acme.example.com/fx.json", Identifier: "urn:ai:acme.example.com:agent:fx",
			URN: "urn:air:acme.example.com:agent:fx", Document: "https://acme.example.com/.well-known/ard.json",
			Publisher: &registry.CatalogPublisher{Identifier: "did:web:acme.example.com", DisplayName: "Acme"}})
		if len(rec.Registered) != 1 {
			t.Fatalf("%+v", rec)
		}
		id := rec.Registered[0]
		a, err := svc.Get(ctx, admin, id)
		if err != nil || a.CatalogSource == nil || *a.CatalogSource != (registry.CatalogSource{Document: "https://acme.example.com/.well-known/ard.json",
			Identifier: "urn:ai:acme.example.com:agent:fx", URN: "urn:air:acme.example.com:agent:fx", Publisher: a.CatalogSource.Publisher}) ||
			a.CatalogSource.Publisher == nil || a.CatalogSource.Publisher.DisplayName != "Acme" {
			t.Fatalf("stored %+v %v", a, err)
		}
		got, err := svc.AgentByIdentifier(ctx, admin, "urn:air:acme.example.com:agent:fx")
		if err != nil || got.ID != id {
			t.Fatalf("admin lookup %+v %v", got, err)
		}
		// Pending: an anonymous caller may not list it, so the name finds
		// nothing, as a name nobody has.
		if _, err := svc.AgentByIdentifier(ctx, anonymous, "urn:air:acme.example.com:agent:fx"); !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("anonymous lookup: %v", err)
		}
		// Listed again from the AI Catalog, without a document or a
		// publisher of its own: the provenance follows the listing.
		c.Advance(time.Minute)
		crawl(registry.CatalogAgent{URL: "https://acme.example.com/fx.json", Identifier: "fx"})
		a, _ = svc.Get(ctx, admin, id)
		if a.CatalogSource == nil || *a.CatalogSource != (registry.CatalogSource{Document: cat, Identifier: "fx"}) {
			t.Fatalf("updated %+v", a.CatalogSource)
		}
		if _, err := svc.AgentByIdentifier(ctx, admin, "urn:air:acme.example.com:agent:fx"); !errors.Is(err, registry.ErrNotFound) {
			t.Fatalf("the old name still finds it: %v", err)
		}
		// Submitted directly: it leaves the catalog, and its provenance.
		if _, err := svc.Submit(ctx, admin, "https://acme.example.com/fx.json", ""); err != nil {
			t.Fatal(err)
		}
		if a, _ = svc.Get(ctx, admin, id); a.CatalogSource != nil {
			t.Fatalf("after a direct submission %+v", a.CatalogSource)
		}
	})
}
