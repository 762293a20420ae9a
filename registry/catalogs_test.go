package registry_test

import (
	"encoding/json"
	"errors"
	"slices"
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
			Agents: []registry.CatalogAgent{{URL: "https://acme.example.com/fx/card.json"}, {URL: "https://acme.example.com/"}, {URL: "not a url"},
				{URL: "https://a2a.acme.example.com/fx/card.json"}, {URL: "https://acme.example.com:8443/fx/card.json"},
				{URL: "https://acme.example.com/", Identifier: "inline", Card: []byte(`{}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Registered
		// acme.example.com/ is the agent submitted above: left alone; an
		// inline entry on a bare host's URL names no document; entries on
		// another origin of the domain are not the catalog's to register.
		if len(ids) != 1 {
			t.Fatalf("registered %v", ids)
		}
		a, err := svc.Get(ctx, admin, ids[0])
		if err != nil || a.Catalog != cat || a.Status != registry.StatusPending || a.CardURL != "https://acme.example.com/fx/card.json" {
			t.Fatalf("agent %+v %v", a, err)
		}
		rec2, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, NotModified: true, NextCrawlAt: c.Now().Add(time.Hour),
			Agents: []registry.CatalogAgent{{URL: "https://acme.example.com/fx/card.json"}}})
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

// A catalog's listing: an agent another catalog brought stays that
// catalog's while it lists it; once its catalog drops it (a complete crawl),
// a catalog that lists it takes it over and it is listed again. An
// incomplete crawl, a failed one or a 304 marks nothing missing.
func TestCatalogListingOwnership(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		a, b := "https://acme.example.com/.well-known/ai-catalog.json", "https://acme.example.com/team.json"
		fx := registry.CatalogAgent{URL: "https://acme.example.com/fx.json"}
		inline := registry.CatalogAgent{URL: a, Identifier: "urn:x", Card: []byte(`{"name":"x"}`)}
		record := func(url string, complete bool, agents ...registry.CatalogAgent) registry.CatalogRecord {
			t.Helper()
			r, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: url, Domain: "example.com", Trace: json.RawMessage(`{}`),
				Agents: agents, Complete: complete, NextCrawlAt: c.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if r := record(a, true, fx, inline); len(r.Registered) != 2 {
			t.Fatalf("registered %+v", r)
		}
		if r := record(b, true, fx); len(r.Registered)+len(r.Listed) != 0 {
			t.Fatalf("another catalog took a listed agent: %+v", r)
		}
		for _, rec := range []registry.CatalogCrawl{
			{URL: a, Complete: false},
			{URL: a, Error: "http_status (HTTP 500)", ErrorClass: "http_status"},
			{URL: a, NotModified: true},
		} {
			rec.NextCrawlAt = c.Now().Add(time.Hour)
			if r, err := svc.RecordCatalog(ctx, rec); err != nil || len(r.Missing) != 0 {
				t.Fatalf("%+v withdrew %+v %v", rec, r, err)
			}
		}
		r := record(a, true)
		if len(r.Missing) != 2 {
			t.Fatalf("missing %+v", r)
		}
		r = record(b, true, fx)
		if len(r.Listed) != 1 {
			t.Fatalf("not taken over: %+v", r)
		}
		ag, err := svc.Get(ctx, admin, r.Listed[0])
		if err != nil || ag.Catalog != b || ag.CatalogMissing || ag.CardURL != fx.URL {
			t.Fatalf("taken over: %+v %v", ag, err)
		}
		// The inline agent is still a's, and missing.
		list, err := svc.List(ctx, admin, registry.ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range list.Agents {
			if x.CardURL == a+"#urn:x" && (!x.CatalogInline || !x.CatalogMissing || x.Catalog != a) {
				t.Fatalf("inline agent %+v", x)
			}
		}
	})
}

// An entry's representativeQueries are stored with the agent it brings,
// read on every path that builds a record (Get, List, Listed, the index
// source), and replaced when a later crawl of the catalog changes them,
// with a change-log entry for the search index; an unchanged crawl adds
// none.
func TestCatalogQueries(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		cat := "https://acme.example.com/.well-known/ai-catalog.json"
		record := func(agents ...registry.CatalogAgent) registry.CatalogRecord {
			t.Helper()
			r, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, Domain: "example.com", Trace: json.RawMessage(`{}`),
				Agents: agents, Complete: true, NextCrawlAt: c.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		fx := registry.CatalogAgent{URL: "https://acme.example.com/fx.json", Queries: []string{"convert usd to eur", `what's "the" rate?`}}
		plain := registry.CatalogAgent{URL: "https://acme.example.com/plain.json"}
		r := record(fx, plain)
		if len(r.Registered) != 2 {
			t.Fatalf("registered %+v", r)
		}
		fxID, plainID := r.Registered[0], r.Registered[1]
		src := svc.IndexSource()
		check := func(want []string) {
			t.Helper()
			a, err := svc.Get(ctx, admin, fxID)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := svc.Listed(ctx, admin, []string{fxID, plainID})
			if err != nil || len(listed) != 2 {
				t.Fatalf("listed %+v %v", listed, err)
			}
			page, err := svc.List(ctx, admin, registry.ListQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var inList registry.Agent
			for _, x := range page.Agents {
				if x.ID == fxID {
					inList = x
				}
			}
			indexed, err := src.Agents(ctx, []string{fxID})
			if err != nil || len(indexed) != 1 {
				t.Fatalf("index source %+v %v", indexed, err)
			}
			all, err := src.ListAgents(ctx, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			var inAll registry.Agent
			for _, x := range all {
				if x.ID == fxID {
					inAll = x
				}
			}
			for name, got := range map[string][]string{"Get": a.CatalogQueries, "Listed": listed[0].CatalogQueries,
				"List": inList.CatalogQueries, "IndexSource.Agents": indexed[0].CatalogQueries, "IndexSource.ListAgents": inAll.CatalogQueries} {
				if !slices.Equal(got, want) {
					t.Fatalf("%s: queries %q, want %q", name, got, want)
				}
			}
			if listed[1].CatalogQueries != nil {
				t.Fatalf("an entry without queries: %q", listed[1].CatalogQueries)
			}
		}
		check(fx.Queries)
		changes := func() []registry.Change {
			t.Helper()
			var out []registry.Change
			after := int64(0)
			for {
				cs, next, err := src.Changes(ctx, after, 100)
				if err != nil {
					t.Fatal(err)
				}
				if len(cs) == 0 {
					return out
				}
				for _, ch := range cs {
					if ch.AgentID == fxID {
						out = append(out, ch)
					}
				}
				after = next
			}
		}
		before := len(changes())
		c.Advance(time.Minute)
		record(fx, plain) // the same queries: nothing changes
		if n := len(changes()); n != before {
			t.Fatalf("an unchanged crawl logged %d changes", n-before)
		}
		fx.Queries = []string{"exchange rate of the yen"}
		c.Advance(time.Minute)
		record(fx, plain)
		check(fx.Queries)
		cs := changes()
		if len(cs) != before+1 || cs[len(cs)-1].Kind != registry.ChangeChanged {
			t.Fatalf("changes after new queries: %+v (had %d)", cs, before)
		}
		fx.Queries = nil
		c.Advance(time.Minute)
		record(fx, plain)
		check(nil)
		if n := len(changes()); n != before+2 {
			t.Fatalf("dropping the queries logged %d changes, want 1", n-before-1)
		}
	})
}

// Who may take a catalog's agent over by submitting its card URL
// (docs/threats.md K.102): the origin's owner (an admin, a publisher token
// scoped to the host) always; anyone when the catalog that registered it
// is on another origin (a row from before catalogs were held to their
// origin); nobody else, and nobody for an inline card, whose only source
// is its catalog. A taken-over agent keeps its id and status, loses the
// catalog and its phrases, and the catalog never lists it away again.
func TestSubmitTakesOverCatalogAgent(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		ctx := t.Context()
		cat := "https://acme.example.com/.well-known/ai-catalog.json"
		if _, err := svc.Submit(ctx, admin, "acme.example.com", ""); err != nil {
			t.Fatal(err)
		}
		agents := []registry.CatalogAgent{
			{URL: "https://acme.example.com/a.json", Queries: []string{"find a"}},
			{URL: "https://acme.example.com/b.json", Queries: []string{"find b"}},
			{URL: "https://acme.example.com/c.json"},
			{URL: cat, Identifier: "inline", Card: []byte(`{"name":"x"}`)},
		}
		rec, err := svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, Trace: json.RawMessage(`{}`), Complete: true,
			NextCrawlAt: c.Now().Add(time.Hour), Agents: agents})
		if err != nil || len(rec.Registered) != 4 {
			t.Fatalf("crawl %+v %v", rec, err)
		}
		ids := map[string]string{}
		for _, id := range rec.Registered {
			a, _ := svc.Get(ctx, admin, id)
			ids[a.CardURL] = id
		}
		// Anonymous: a duplicate, the catalog on its own origin speaks for it.
		var dup *registry.DuplicateError
		if _, err := svc.Submit(ctx, anonymous, "https://acme.example.com/a.json", ""); !errors.As(err, &dup) || dup.AgentID != ids["https://acme.example.com/a.json"] {
			t.Fatalf("anonymous: %v", err)
		}
		// An inline card: a duplicate even for an admin.
		if _, err := svc.Submit(ctx, admin, cat+"#inline", ""); err == nil {
			t.Fatal("an inline card's URL was taken over")
		}
		// The owner's publisher token, and an admin: taken over.
		for url, p := range map[string]registry.Principal{"https://acme.example.com/a.json": publisher("acme.example.com"), "https://acme.example.com/b.json": admin} {
			a, err := svc.Submit(ctx, p, url, "")
			if err != nil || a.ID != ids[url] || a.Catalog != "" || len(a.CatalogQueries) != 0 || a.Status != registry.StatusPending {
				t.Fatalf("%s by %s: %+v %v", url, p.Role, a, err)
			}
		}
		// A row a catalog on another origin registered (before the origin
		// rule): anyone's submission takes it over.
		if err := s.WriteDB().Exec("UPDATE agents SET catalog_url = ? WHERE id = ?", "https://evil.example.com/.well-known/ai-catalog.json",
			ids["https://acme.example.com/c.json"]).Error; err != nil {
			t.Fatal(err)
		}
		if a, err := svc.Submit(ctx, anonymous, "https://acme.example.com/c.json", ""); err != nil || a.Catalog != "" {
			t.Fatalf("legacy squat: %+v %v", a, err)
		}
		// The catalog drops a and b and lists b with new phrases: neither
		// is its any more, so neither is missing nor described by it.
		rec, err = svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat, Trace: json.RawMessage(`{}`), Complete: true,
			NextCrawlAt: c.Now().Add(time.Hour), Agents: []registry.CatalogAgent{{URL: "https://acme.example.com/b.json", Queries: []string{"stolen"}}, agents[3]}})
		if err != nil || len(rec.Missing) != 0 || len(rec.Registered) != 0 {
			t.Fatalf("recrawl %+v %v", rec, err)
		}
		for _, u := range []string{"https://acme.example.com/a.json", "https://acme.example.com/b.json"} {
			if a, _ := svc.Get(ctx, admin, ids[u]); a.CatalogMissing || len(a.CatalogQueries) != 0 || a.Catalog != "" {
				t.Fatalf("%s after the recrawl: %+v", u, a)
			}
		}
		// The audit says who took each over, from which catalog.
		entries, _, err := svc.Audit(ctx, admin, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		from := map[string]any{}
		for _, e := range entries {
			if e.Action == "submit" && e.Detail["fromCatalog"] != nil {
				from[e.AgentID] = e.Detail["fromCatalog"]
			}
		}
		if len(from) != 3 || from[ids["https://acme.example.com/a.json"]] != cat {
			t.Fatalf("takeover audit entries %v", from)
		}
	})
}
