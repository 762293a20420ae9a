package api

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// nameResolver answers the test's names: "site.example.com" is the loopback
// site, "meta.example.com" a link-local (metadata) address.
type nameResolver struct{}

func (nameResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "site.example.com":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case "meta.example.com":
		return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// POST /api/v1/agents with catalogUrl (or a cardUrl on the well-known
// catalog path) registers the catalog and its agents at once; bad input
// is a problem with a stable type and stores nothing.
func TestSubmitCatalogURL(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		var origin string
		var siteHits atomic.Int64
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			siteHits.Add(1)
			switch r.URL.Path {
			case aicatalog.WellKnownPath:
				w.Header().Set("Content-Type", aicatalog.MediaType)
				w.Write([]byte(`{"specVersion":"1.0","entries":[` +
					`{"identifier":"fx","type":"` + aicatalog.TypeA2ACard + `","url":"` + origin + `/fx.json"},` +
					`{"identifier":"trips","type":"` + aicatalog.TypeA2ACard + `","data":` + string(agentfleet.GenerateCard(2, origin, "1.0.0")) + `},` +
					`{"identifier":"far","type":"` + aicatalog.TypeA2ACard + `","url":"https://far.example.org/card.json"}]}`))
			case "/fx.json":
				w.Header().Set("Content-Type", "application/json")
				w.Write(agentfleet.GenerateCard(1, origin, "1.0.0"))
			case "/to-metadata":
				http.Redirect(w, r, "http://169.254.169.254/latest/", http.StatusFound)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(site.Close)
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(site.URL, "http://"))
		origin = "http://site.example.com:" + port
		pol := fetch.DefaultPolicy()
		pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		pol.AllowInsecureHTTP = true
		pol.Timeout = 5 * time.Second
		f, err := fetch.New(fetch.Config{Policy: pol, Resolver: nameResolver{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		h := newHarnessWith(t, store, func(c *registry.ServiceConfig) {
			c.URLPolicy = registry.URLPolicy{AllowInsecureHTTP: true, AllowNetworks: pol.AllowNetworks}
			c.CatalogCrawler = crawler.CatalogCrawler{Fetcher: f}
		})
		admin := h.token(registry.RoleAdmin)
		submit := func(body string) response {
			return h.do(req{method: "POST", path: "/api/v1/agents", body: strings.NewReader(body), token: admin})
		}

		// Bad input first: nothing is stored by any of it.
		for _, c := range []struct {
			body, slug string
			status     int
			reason     string
			class      string
		}{
			{`{"catalogUrl":"ftp://site.example.com/c.json"}`, "invalid-url", 400, "", ""},
			{`{"catalogUrl":"http://169.254.169.254/.well-known/ai-catalog.json"}`, "reserved-address", 400, "", ""},
			{`{"catalogUrl":"http://meta.example.com/.well-known/ai-catalog.json"}`, "reserved-address", 400, "", ""},
			{`{"catalogUrl":"` + origin + `/to-metadata"}`, "catalog-failed", 422, "fetch-failed", "cross_origin_redirect"},
			{`{"catalogUrl":"` + origin + `/fx.json"}`, "catalog-failed", 422, "not-a-catalog", "not_a_catalog"},
			{`{"catalogUrl":"` + origin + `/none.json"}`, "catalog-failed", 422, "fetch-failed", "http_status"},
			{`{"catalogUrl":"` + origin + `/","cardUrl":"` + origin + `/fx.json"}`, "validation-failed", 400, "", ""},
			{`{"catalogUrl":"` + origin + `/","visibility":"internal"}`, "validation-failed", 400, "", ""},
		} {
			p := submit(c.body).expectProblem(t, c.status, c.slug)
			if p.Reason != c.reason || p.ErrorClass != c.class {
				t.Errorf("%s: reason %q class %q, want %q %q", c.body, p.Reason, p.ErrorClass, c.reason, c.class)
			}
		}
		if list, err := h.svc.Catalogs(h.ctx(), registry.Principal{Role: registry.RoleAdmin}); err != nil || len(list) != 0 {
			t.Fatalf("catalogs after bad input: %+v %v", list, err)
		}

		// Anonymous submission of the catalog: 202, two pending agents (the
		// URL entry and the inline one), the off-domain entry traced.
		r := h.do(req{method: "POST", path: "/api/v1/agents", body: strings.NewReader(`{"catalogUrl":"` + origin + `"}`)})
		r.expectStatus(t, http.StatusAccepted)
		var sub struct {
			Catalog string `json:"catalog"`
			Agents  []struct {
				ID, CardURL, Status, Catalog string
				CatalogInline                bool
			} `json:"agents"`
			Entries []struct{ Identifier, Outcome, Agent string } `json:"entries"`
		}
		r.json(t, &sub)
		cat := origin + aicatalog.WellKnownPath
		if sub.Catalog != cat || len(sub.Agents) != 2 || len(sub.Entries) != 3 || sub.Entries[2].Outcome != "off-domain" {
			t.Fatalf("submission %s", r.body)
		}
		got := map[string]bool{}
		for _, a := range sub.Agents {
			if a.Status != "pending" || a.Catalog != cat {
				t.Errorf("agent %+v", a)
			}
			got[a.CardURL] = a.CatalogInline
		}
		if inline, ok := got[cat+"#trips"]; !ok || !inline {
			t.Errorf("inline agent missing: %v", got)
		}
		if inline, ok := got[origin+"/fx.json"]; !ok || inline {
			t.Errorf("URL agent missing: %v", got)
		}
		// A pending agent is listed to no anonymous caller.
		var page struct{ Agents []any }
		h.do(req{method: "GET", path: "/api/v1/agents"}).json(t, &page)
		if len(page.Agents) != 0 {
			t.Fatalf("anonymous list shows %d agents", len(page.Agents))
		}
		// The well-known path as cardUrl is the same catalog, known: 200,
		// its last trace, nothing fetched or registered.
		hits := siteHits.Load()
		r = submit(`{"cardUrl":"` + cat + `"}`)
		r.expectStatus(t, http.StatusOK)
		var again struct {
			Catalog    string `json:"catalog"`
			Known      bool   `json:"known"`
			Registered int    `json:"registered"`
			Agents     []any  `json:"agents"`
			Entries    []any  `json:"entries"`
		}
		r.json(t, &again)
		if again.Catalog != cat || !again.Known || again.Registered != 0 || len(again.Agents) != 0 || len(again.Entries) != 3 || siteHits.Load() != hits {
			t.Fatalf("second submission %s (%d requests to the site)", r.body, siteHits.Load()-hits)
		}
	})
}
