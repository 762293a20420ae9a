package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// The publish page submits an AI Catalog: the answer lists the agents it
// registered and every entry's outcome; a URL that is not a catalog comes
// back to the form with the reason; the inline agent's page says where its
// card comes from.
func TestPublishCatalog(t *testing.T) {
	var origin string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	origin = site.URL
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	pol.Timeout = 5 * time.Second
	f, err := fetch.New(fetch.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	e := newEnvWith(t, func(c *registry.ServiceConfig) { c.CatalogCrawler = crawler.CatalogCrawler{Fetcher: f} })

	d := parse(t, e.get("/publish"))
	d.one(`label[for=catalogUrl]`)
	r := e.do("POST", "/publish", url.Values{"catalogUrl": {origin + "/fx.json"}}, nil)
	wantStatus(t, r, 422)
	d = parse(t, r)
	if got := d.text("#catalog-error"); !strings.Contains(got, "This is not an AI Catalog") || !strings.Contains(got, "it is an agent card") {
		t.Errorf("not a catalog: %q", got)
	}
	if v, _ := attr(d.one("input#catalogUrl"), "value"); v != origin+"/fx.json" {
		t.Errorf("the form lost the input %q", v)
	}

	// The well-known catalog path given as a card URL is a catalog too.
	r = e.do("POST", "/publish", url.Values{"cardUrl": {origin + aicatalog.WellKnownPath}}, nil)
	wantStatus(t, r, 200)
	d = parse(t, r)
	if got := d.text("#catalog-new"); got != "2" || d.count("#catalog-agents li") != 2 || d.count("#catalog-entries tbody tr") != 3 || e.kicks != 1 {
		t.Fatalf("new %q, %d agents listed, %d entries, kicks %d", got, d.count("#catalog-agents li"), d.count("#catalog-entries tbody tr"), e.kicks)
	}
	if !strings.Contains(d.text("#catalog-entries"), "off-domain") {
		t.Errorf("entries: %q", d.text("#catalog-entries"))
	}
	var inline string
	for _, a := range d.all("#catalog-agents li a") {
		if href, _ := attr(a, "href"); strings.Contains(text(a), "#trips") {
			inline = strings.TrimPrefix(href, "/publish/")
		}
	}
	if inline == "" {
		t.Fatal("the inline agent is not listed")
	}
	d = parse(t, e.get("/agents/"+inline))
	if got := d.text("#catalog"); !strings.Contains(got, origin+aicatalog.WellKnownPath) || !strings.Contains(got, "card given inline in the catalog") {
		t.Errorf("agent page catalog: %q", got)
	}

	// Submitted again: known, nothing registered, its last trace shown
	// (docs/threats.md K.97).
	r = e.do("POST", "/publish", url.Values{"catalogUrl": {origin}}, nil)
	wantStatus(t, r, 200)
	d = parse(t, r)
	if got := d.text("#catalog-new"); got != "0" || d.count("#catalog-known") != 1 || d.count("#catalog-entries tbody tr") != 3 || e.kicks != 1 {
		t.Fatalf("again: new %q, known %d, %d entries, kicks %d", got, d.count("#catalog-known"), d.count("#catalog-entries tbody tr"), e.kicks)
	}
}
