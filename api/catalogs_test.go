package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
)

func TestCatalogsList(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		h.submit("https://acme.example.com/", "")
		if err := func() error {
			_, err := h.svc.RecordCatalog(h.ctx(), registry.CatalogCrawl{URL: "https://acme.example.com/.well-known/ai-catalog.json", Domain: "example.com",
				Trace: []byte(`{"domain":"example.com","documents":[{"url":"https://acme.example.com/.well-known/ai-catalog.json","depth":0,"entries":1}],` +
					`"entries":[{"catalog":"https://acme.example.com/.well-known/ai-catalog.json","index":0,"identifier":"far","url":"https://far.example.org/c.json","outcome":"off-domain","message":"on example.org, not example.com"}]}`),
				NextCrawlAt: time.Now().Add(time.Hour)})
			return err
		}(); err != nil {
			t.Fatal(err)
		}
		r := h.do(req{method: "GET", path: "/api/v1/catalogs", token: admin})
		r.expectStatus(t, http.StatusOK)
		var out struct {
			Catalogs []registry.Catalog `json:"catalogs"`
		}
		r.json(t, &out)
		if len(out.Catalogs) != 1 || out.Catalogs[0].Domain != "example.com" || out.Catalogs[0].LastCrawledAt == nil {
			t.Fatalf("%+v", out)
		}
		h.do(req{method: "GET", path: "/api/v1/catalogs"}).expectStatus(t, http.StatusUnauthorized)
		h.do(req{method: "GET", path: "/api/v1/catalogs", token: h.token(registry.RoleReader)}).expectStatus(t, http.StatusForbidden)
		h.do(req{method: "GET", path: "/api/v1/catalogs?x=1", token: admin}).expectStatus(t, http.StatusBadRequest)
	})
}
