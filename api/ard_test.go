package api

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

type ardEntryJSON struct {
	Identifier            string         `json:"identifier"`
	DisplayName           string         `json:"displayName"`
	Type                  string         `json:"type"`
	URL                   string         `json:"url"`
	Tags                  []string       `json:"tags"`
	RepresentativeQueries []string       `json:"representativeQueries"`
	Metadata              map[string]any `json:"metadata"`
	Score                 *int           `json:"score"`
	Source                string         `json:"source"`
}

type ardSearchJSON struct {
	Results   []ardEntryJSON `json:"results"`
	Referrals []ardEntryJSON `json:"referrals"`
	PageToken string         `json:"pageToken"`
}

// expectARDError asserts an ARD error envelope: the status, the code and
// exactly the two members.
func (r response) expectARDError(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	var m map[string]any
	r.json(t, &m)
	if len(m) != 2 || m["errorCode"] != code || m["message"] == "" {
		t.Fatalf("envelope %s, want errorCode %s", r.body, code)
	}
}

func ardOwn(_ *searchHarness, a registry.Agent) string {
	return "urn:air:127.0.0.1:cardex:" + a.ID
}

// docs/discovery.md "ARD registry API": list, lookup, search and explore
// show exactly what GET /api/v1/agents shows the same caller.
func TestARDRegistryAPI(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		c := newCatalogue(h)
		base := h.srv.URL

		var list struct {
			Items     []ardEntryJSON `json:"items"`
			Total     int            `json:"total"`
			PageToken string         `json:"pageToken"`
		}
		h.do(req{method: "GET", path: "/ard/agents?orderBy=displayName"}).json(t, &list)
		var names []string
		for _, e := range list.Items {
			names = append(names, e.DisplayName)
			if e.Type != "application/a2a-agent-card+json" || !strings.HasPrefix(e.Identifier, "urn:air:127.0.0.1:cardex:") {
				t.Fatalf("entry %+v", e)
			}
		}
		if list.Total != 3 || strings.Join(names, ",") != "Currency Converter,Route Planner,Weather Oracle" || list.PageToken != "" {
			t.Fatalf("anonymous list %d %v %q", list.Total, names, list.PageToken)
		}
		h.do(req{method: "GET", path: "/ard/agents?pageSize=1"}).json(t, &list)
		if len(list.Items) != 1 || list.Total != 3 || list.PageToken == "" {
			t.Fatalf("page of one: %+v", list)
		}
		// An admin sees what it sees on /api/v1 (the internal and pending agents too).
		h.do(req{method: "GET", path: "/ard/agents", token: c.admin}).json(t, &list)
		if list.Total != 5 {
			t.Fatalf("admin total %d", list.Total)
		}
		h.do(req{method: "GET", path: "/ard/agents?filter=" + url.QueryEscape("type=application/mcp-server-card+json")}).json(t, &list)
		if list.Total != 0 || len(list.Items) != 0 {
			t.Fatalf("mcp filter %+v", list)
		}
		h.do(req{method: "GET", path: "/ard/agents?filter=" + url.QueryEscape("type=application/agent-card+json AND tags=finance")}).json(t, &list)
		if list.Total != 1 || list.Items[0].Identifier != ardOwn(h, c.currency) {
			t.Fatalf("tags filter %+v", list)
		}
		h.do(req{method: "GET", path: "/ard/agents?filter=" + url.QueryEscape("publisherId=acme.com")}).expectARDError(t, 400, "INVALID_ARGUMENT")
		h.do(req{method: "GET", path: "/ard/agents?orderBy=trust"}).expectARDError(t, 400, "INVALID_ARGUMENT")
		h.do(req{method: "GET", path: "/ard/agents?pageSize=101"}).expectARDError(t, 400, "INVALID_ARGUMENT")
		h.do(req{method: "GET", path: "/ard/agents?bogus=1"}).expectARDError(t, 400, "INVALID_ARGUMENT")

		// Lookup by either of Cardex's own identifiers, URL-encoded as one
		// segment.
		var one ardEntryJSON
		for _, ident := range []string{ardOwn(h, c.weather), base + "/agents/" + c.weather.ID} {
			h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape(ident)}).json(t, &one)
			if one.Identifier != ardOwn(h, c.weather) || one.DisplayName != "Weather Oracle" || one.URL != "https://weather.example.com/.well-known/agent-card.json" ||
				strings.Join(one.Tags, ",") != "weather,climate" ||
				one.Metadata["cardex.registry.record"] != base+"/api/v1/agents/"+c.weather.ID {
				t.Fatalf("lookup %q: %+v", ident, one)
			}
		}
		// Hidden from the anonymous caller as on /api/v1: NOT_FOUND, the
		// same as an identifier nobody has.
		h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape(ardOwn(h, c.pendingOnly))}).expectARDError(t, 404, "NOT_FOUND")
		h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape(ardOwn(h, c.pendingOnly)), token: c.admin}).expectStatus(t, 200)
		h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape("urn:air:nobody.example:agent:x")}).expectARDError(t, 404, "NOT_FOUND")
		for _, bad := range []string{"not-an-identifier", "urn:air", "urn::x", "urn%3Aair%3Aa%20b%3Ac", url.PathEscape("urn:air:x:\x01")} {
			h.do(req{method: "GET", path: "/ard/agents/" + bad}).expectARDError(t, 400, "INVALID_ARGUMENT")
		}

		// Search: relevance 0–100 as an integer, this registry as source.
		var res ardSearchJSON
		h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"exchange rates currencies"},"federation":"none","pageSize":5}`)}).json(t, &res)
		if len(res.Results) != 1 || res.Results[0].Identifier != ardOwn(h, c.currency) || res.Results[0].Score == nil ||
			*res.Results[0].Score < 1 || *res.Results[0].Score > 100 || res.Results[0].Source != base+"/ard" || res.Referrals != nil {
			t.Fatalf("search %s", mustJSON(res))
		}
		// Without peers every federation mode answers locally.
		for _, fed := range []string{"auto", "referrals", ""} {
			body := `{"query":{"text":"weather","filter":{"type":"application/a2a-agent-card+json","tags":["weather"]}}`
			if fed != "" {
				body += `,"federation":"` + fed + `"`
			}
			h.do(req{method: "POST", path: "/ard/search", body: jsonBody(body + `}`)}).json(t, &res)
			if len(res.Results) != 1 || res.Results[0].Identifier != ardOwn(h, c.weather) || res.Referrals != nil {
				t.Fatalf("federation %q: %s", fed, mustJSON(res))
			}
		}
		h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"weather","filter":{"type":["application/mcp-server-card+json"]}}}`)}).json(t, &res)
		if len(res.Results) != 0 {
			t.Fatalf("mcp type: %s", mustJSON(res))
		}
		for _, bad := range []string{`{}`, `{"query":{}}`, `{"query":{"text":" "}}`, `{"query":{"text":"x"},"pageSize":101}`,
			`{"query":{"text":"x"},"pageSize":0}`, `{"query":{"text":"x"},"federation":"all"}`, `{"query":{"text":"x","filter":{"publisher":["a"]}}}`,
			`{"query":{"text":"x","filter":{"tags":[1]}}}`, `{"query":{"text":"x"},"extra":1}`, `{"query":"x"}`, `[1]`, `{"query":{"text":"x"},"pageToken":7}`} {
			h.do(req{method: "POST", path: "/ard/search", body: jsonBody(bad)}).expectARDError(t, 400, "INVALID_ARGUMENT")
		}
		h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"x"}`)}).expectARDError(t, 400, "INVALID_ARGUMENT")
		h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"x"},"pageToken":"forged"}`)}).expectARDError(t, 400, "INVALID_ARGUMENT")

		// Explore: counts over the whole match, from the index's facets.
		var ex struct {
			ResultType string `json:"resultType"`
			Facets     map[string]struct {
				Buckets []struct {
					Value string `json:"value"`
					Count int    `json:"count"`
				} `json:"buckets"`
				OtherCount int `json:"otherCount"`
			} `json:"facets"`
		}
		h.do(req{method: "POST", path: "/ard/explore", body: jsonBody(`{"resultType":{"facets":[{"field":"type"},{"field":"tags","limit":2},{"field":"provider","minCount":2}]}}`)}).json(t, &ex)
		if ex.ResultType != "facets" || len(ex.Facets["type"].Buckets) != 1 || ex.Facets["type"].Buckets[0].Count != 3 ||
			len(ex.Facets["tags"].Buckets) != 2 || ex.Facets["tags"].OtherCount != 4 ||
			len(ex.Facets["provider"].Buckets) != 1 || ex.Facets["provider"].Buckets[0].Value != "Acme" || ex.Facets["provider"].Buckets[0].Count != 2 {
			t.Fatalf("explore %+v", ex)
		}
		h.do(req{method: "POST", path: "/ard/explore", body: jsonBody(`{"query":{"text":"route"},"resultType":{"facets":[{"field":"type"}]}}`)}).json(t, &ex)
		if ex.Facets["type"].Buckets[0].Count != 1 {
			t.Fatalf("explore with text %+v", ex)
		}
		for _, bad := range []string{`{}`, `{"resultType":{"facets":[]}}`, `{"resultType":{"facets":[{"field":"trustManifest.attestations.type"}]}}`,
			`{"resultType":{"facets":[{"field":"type","limit":0}]}}`, `{"resultType":{"facets":[{}]}}`} {
			h.do(req{method: "POST", path: "/ard/explore", body: jsonBody(bad)}).expectARDError(t, 400, "INVALID_ARGUMENT")
		}
		h.do(req{method: "GET", path: "/ard/search"}).expectARDError(t, 405, "METHOD_NOT_ALLOWED")
	})
}

// A search's cost is that of a GET /api/v1/agents page of the same size,
// spent from the same budget: a page of 100 costs what a list of 100
// costs, and the anonymous budget runs out at the same point
// (docs/security.md "Rate limits").
func TestARDSearchSpendsReadBudget(t *testing.T) {
	h := newSearchHarness(t, registrytest.SQLite(t), func(cfg *Config) {
		cfg.Limits.ReadPerAddress = ratelimit.Rate{N: 1, Per: time.Hour, Burst: 5}
	})
	h.sync()
	// Burst 5: one page of 100 costs 5 (ratelimit.ReadCost), so the
	// next read is refused, in ARD's envelope.
	h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"x"},"pageSize":100}`)}).expectStatus(t, 200)
	r := h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"x"}}`)})
	r.expectARDError(t, 429, "RATE_LIMIT_EXCEEDED")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	h.do(req{method: "GET", path: "/ard/agents"}).expectARDError(t, 429, "RATE_LIMIT_EXCEEDED")
}

// docs/discovery.md "Identifiers": the publisher's own identifier, also
// in its legacy urn:ai: spelling, is what ARD shows and answers by; one in
// another domain's namespace is kept as provenance only.
func TestARDPublisherIdentifiers(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newSearchHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		cat := "https://acme.example.com/.well-known/ai-catalog.json"
		doc := "https://acme.example.com/.well-known/ard.json"
		rec, err := h.svc.RecordCatalog(h.ctx(), registry.CatalogCrawl{URL: cat, Domain: "acme.example.com", Complete: true, Agents: []registry.CatalogAgent{
			{URL: "https://acme.example.com/fx.json", Identifier: "urn:ai:acme.example.com:agent:fx", URN: "urn:air:acme.example.com:agent:fx",
				Document: doc, Publisher: &registry.CatalogPublisher{Identifier: "did:web:acme.example.com", DisplayName: "Acme"},
				Queries: []string{"convert euros", "fx rate"}},
			{URL: "https://acme.example.com/squat.json", Identifier: "urn:air:google.com:agent:tax", Document: doc},
		}})
		if err != nil || len(rec.Registered) != 2 {
			t.Fatalf("%+v %v", rec, err)
		}
		for i, id := range rec.Registered {
			h.fetch(id, testCard{name: []string{"FX", "Squatter"}[i], description: "Converts currencies.", provider: "Acme"}.json("acme.example.com"))
			h.do(req{method: "POST", path: "/api/v1/agents/" + id + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).expectStatus(t, 200)
		}
		h.sync()
		var rec0 struct {
			CatalogSource registry.CatalogSource `json:"catalogSource"`
		}
		h.do(req{method: "GET", path: "/api/v1/agents/" + rec.Registered[0]}).json(t, &rec0)
		if s := rec0.CatalogSource; s.Identifier != "urn:ai:acme.example.com:agent:fx" || s.URN != "urn:air:acme.example.com:agent:fx" ||
			s.Document != doc || s.Publisher == nil || s.Publisher.DisplayName != "Acme" {
			t.Fatalf("provenance %+v", rec0)
		}
		var one ardEntryJSON
		for _, ident := range []string{"urn:air:acme.example.com:agent:fx", "urn:ai:acme.example.com:agent:fx", "URN:AIR:acme.example.com:agent:fx"} {
			h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape(ident)}).json(t, &one)
			if one.Identifier != "urn:air:acme.example.com:agent:fx" || one.DisplayName != "FX" ||
				strings.Join(one.RepresentativeQueries, "|") != "convert euros|fx rate" ||
				one.Metadata["cardex.registry.source.identifier"] != "urn:ai:acme.example.com:agent:fx" {
				t.Fatalf("lookup %q: %+v", ident, one)
			}
		}
		// The name is case-sensitive past the prefix (RFC 8141).
		h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape("urn:air:acme.example.com:agent:FX")}).expectARDError(t, 404, "NOT_FOUND")
		// Another domain's namespace: not the agent's name here.
		h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape("urn:air:google.com:agent:tax")}).expectARDError(t, 404, "NOT_FOUND")
		h.do(req{method: "GET", path: "/ard/agents/" + url.PathEscape("urn:air:127.0.0.1:cardex:"+rec.Registered[1])}).json(t, &one)
		if one.DisplayName != "Squatter" || one.Metadata["cardex.registry.source.identifier"] != "urn:air:google.com:agent:tax" {
			t.Fatalf("squatter %+v", one)
		}
		var res ardSearchJSON
		// "euros" is in FX's representative queries only; the other card's
		// "currencies" answers it too through the built-in synonyms
		// (search/synonyms.txt), at a lower score.
		h.do(req{method: "POST", path: "/ard/search", body: jsonBody(`{"query":{"text":"euros"}}`)}).json(t, &res)
		if len(res.Results) == 0 || res.Results[0].Identifier != "urn:air:acme.example.com:agent:fx" ||
			(len(res.Results) > 1 && *res.Results[1].Score >= *res.Results[0].Score) {
			t.Fatalf("search by representative query %s", mustJSON(res))
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
