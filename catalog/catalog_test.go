package catalog

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/discover/discovertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func serve(t *testing.T, store *registry.Store, page int) (*discovertest.Fixture, *httptest.Server) {
	t.Helper()
	f := discovertest.New(t, store)
	mux := http.NewServeMux()
	mux.Handle(aicatalog.WellKnownPath, New(Config{Finder: f.Finder, Gate: &discover.Gate{Authenticate: f.Svc.Authenticate}, PageEntries: page}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func get(t *testing.T, u string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestOwnCatalog(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		f, srv := serve(t, store, 0)
		for _, token := range []string{"", f.Reader} {
			var h []string
			if token != "" {
				h = []string{"Authorization", "Bearer " + token}
			}
			resp, body := get(t, srv.URL+aicatalog.WellKnownPath, h...)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != aicatalog.MediaType || resp.Header.Get("ETag") == "" ||
				resp.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatalf("%d %v", resp.StatusCode, resp.Header)
			}
			// The public catalog never lists internal or unapproved agents,
			// whoever asks.
			if strings.Contains(body, "ledger.example.com") || strings.Contains(body, "pay.example.com") {
				t.Fatalf("catalog lists a hidden agent: %s", body)
			}
			doc, problems, err := aicatalog.Parse([]byte(body), aicatalog.DefaultLimits)
			if err != nil || len(problems) != 0 || doc.SpecVersion != "0.9" || doc.Host.DisplayName != "Cardex" || len(doc.Entries) != 2 {
				t.Fatalf("doc %+v %v %v", doc, problems, err)
			}
			var fx *aicatalog.Entry
			for i := range doc.Entries {
				if doc.Entries[i].URL == f.FX.CardURL {
					fx = &doc.Entries[i]
				}
			}
			if fx == nil || fx.Type != aicatalog.TypeA2ACard || fx.Identifier != srv.URL+"/agents/"+f.FX.ID ||
				fx.Publisher != nil || strings.Join(fx.Tags, ",") != "finance" || fx.Version != "1.0.0" {
				t.Fatalf("fx entry %+v", fx)
			}
			ext, _ := json.Marshal(fx.Extensions[Extension])
			if !strings.Contains(string(ext), `"record":"`+srv.URL+`/api/v1/agents/`+f.FX.ID+`"`) || !strings.Contains(string(ext), `"trust":"unsigned"`) {
				t.Fatalf("extension %s", ext)
			}
			if strings.Contains(body, "mediaType") {
				t.Fatal("the catalog is written in the old form")
			}
			if r2, _ := get(t, srv.URL+aicatalog.WellKnownPath, "If-None-Match", resp.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
				t.Fatalf("conditional: %d", r2.StatusCode)
			}
		}
	})
}

func TestCatalogPages(t *testing.T) {
	_, srv := serve(t, registrytest.SQLite(t), 1)
	_, body := get(t, srv.URL+aicatalog.WellKnownPath)
	doc, _, err := aicatalog.Parse([]byte(body), aicatalog.DefaultLimits)
	if err != nil || len(doc.Entries) != 2 || doc.Entries[1].Type != aicatalog.MediaType {
		t.Fatalf("page 1: %s", body)
	}
	next := doc.Entries[1].URL
	if !strings.HasPrefix(next, srv.URL+aicatalog.WellKnownPath+"?pageToken=") {
		t.Fatalf("next %q", next)
	}
	_, body2 := get(t, next)
	doc2, _, err := aicatalog.Parse([]byte(body2), aicatalog.DefaultLimits)
	if err != nil || len(doc2.Entries) != 1 || doc2.Entries[0].URL == doc.Entries[0].URL || doc2.Entries[0].Type != aicatalog.TypeA2ACard {
		t.Fatalf("page 2: %s", body2)
	}
	for _, bad := range []string{"?pageToken=nope", "?page=2"} {
		if r, _ := get(t, srv.URL+aicatalog.WellKnownPath+bad); r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d", bad, r.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+aicatalog.WellKnownPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
}
