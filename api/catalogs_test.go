package api

import (
	"io"
	"net/http"
	"slices"
	"strings"
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

// Catalogs are paused, resumed and removed by admins, each change audited
// once: a repeat answers 200 with the catalog as it is.
func TestCatalogsLifecycle(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		h.submit("https://acme.example.com/", "")
		url := "https://acme.example.com/.well-known/ai-catalog.json"
		if _, err := h.svc.RecordCatalog(h.ctx(), registry.CatalogCrawl{URL: url, Error: "catalog answered 404", ErrorClass: "http_status",
			HTTPStatus: 404, NextCrawlAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		var list struct {
			Catalogs []registry.Catalog `json:"catalogs"`
		}
		h.do(req{method: "GET", path: "/api/v1/catalogs", token: admin}).json(t, &list)
		if len(list.Catalogs) != 1 || list.Catalogs[0].Status != registry.CatalogActive || list.Catalogs[0].Health != registry.HealthFailing ||
			list.Catalogs[0].LastError != "catalog answered 404" || list.Catalogs[0].ConsecutiveFailures != 1 {
			t.Fatalf("%+v", list)
		}
		id := list.Catalogs[0].ID
		change := func(method, path, body string, status int) registry.Catalog {
			t.Helper()
			var b io.Reader
			var hdr []string
			if body != "" {
				b, hdr = strings.NewReader(body), []string{"Content-Type", "application/json"}
			}
			r := h.do(req{method: method, path: path, token: admin, body: b, header: hdr})
			r.expectStatus(t, status)
			var cat registry.Catalog
			r.json(t, &cat)
			return cat
		}
		for _, body := range []string{"", "{}"} {
			if got := change("POST", "/api/v1/catalogs/"+id+"/pause", body, http.StatusOK); got.Status != registry.CatalogPaused || got.ID != id {
				t.Fatalf("pause: %+v", got)
			}
		}
		if got := change("POST", "/api/v1/catalogs/"+id+"/resume", "", http.StatusOK); got.Status != registry.CatalogActive || got.Health != registry.HealthUnknown {
			t.Fatalf("resume: %+v", got)
		}
		for range 2 {
			if got := change("DELETE", "/api/v1/catalogs/"+id, "", http.StatusOK); got.Status != registry.CatalogRemoved {
				t.Fatalf("remove: %+v", got)
			}
		}
		h.do(req{method: "POST", path: "/api/v1/catalogs/" + id + "/resume", token: admin}).expectProblem(t, http.StatusConflict, "invalid-transition")
		var audit struct {
			Entries []registry.AuditEntry `json:"entries"`
		}
		h.do(req{method: "GET", path: "/api/v1/audit?action=catalog-pause&action=catalog-resume&action=catalog-remove", token: admin}).json(t, &audit)
		var actions []string
		for _, e := range audit.Entries {
			actions = append(actions, e.Action)
		}
		if want := []string{"catalog-pause", "catalog-resume", "catalog-remove"}; !slices.Equal(actions, want) {
			t.Fatalf("audit %v, want %v", actions, want)
		}
		h.do(req{method: "POST", path: "/api/v1/catalogs/nope/pause", token: admin}).expectProblem(t, http.StatusNotFound, "not-found")
		h.do(req{method: "DELETE", path: "/api/v1/catalogs/nope", token: admin}).expectProblem(t, http.StatusNotFound, "not-found")
		h.do(req{method: "POST", path: "/api/v1/catalogs/" + id + "/pause", token: admin, body: strings.NewReader(`{"x":1}`),
			header: []string{"Content-Type", "application/json"}}).expectStatus(t, http.StatusBadRequest)
		h.do(req{method: "POST", path: "/api/v1/catalogs/" + id + "/pause"}).expectStatus(t, http.StatusUnauthorized)
		reader := h.token(registry.RoleReader)
		h.do(req{method: "POST", path: "/api/v1/catalogs/" + id + "/pause", token: reader}).expectStatus(t, http.StatusForbidden)
		h.do(req{method: "DELETE", path: "/api/v1/catalogs/" + id, token: h.token(registry.RolePublisher, "acme.example.com")}).expectStatus(t, http.StatusForbidden)
	})
}
