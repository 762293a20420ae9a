package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// The catalogs page lists each catalog with its status, health, last error
// and agents; its buttons pause, resume and remove it (same-origin POSTs
// only), each audited once; anonymous visitors are sent to sign in.
func TestAdminCatalogs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.svc.Submit(ctx, registry.Anonymous, "cat.example.com", ""); err != nil {
		t.Fatal(err)
	}
	list, err := e.svc.Catalogs(ctx, adminP)
	if err != nil || len(list) != 1 {
		t.Fatalf("%+v %v", list, err)
	}
	cat := list[0]
	if _, err := e.svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat.URL, Domain: "example.com", Trace: []byte(`{}`), Complete: true,
		Agents: []registry.CatalogAgent{{URL: "https://cat.example.com/a.json"}}, NextCrawlAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RecordCatalog(ctx, registry.CatalogCrawl{URL: cat.URL, Error: "catalog answered 404 <b>", ErrorClass: "http_status", HTTPStatus: 404,
		NextCrawlAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	tok := e.adminToken()
	wantStatus(t, e.do("GET", "/admin/catalogs", nil, nil), 401)
	d := parse(t, e.do("GET", "/admin/catalogs", nil, e.asAdmin(tok)))
	row := `tr.catalog[data-catalog-id="` + cat.ID + `"]`
	if got := d.text(row + " .catalog-status"); got != "active" {
		t.Errorf("status %q", got)
	}
	if got := d.text(row + " .catalog-health"); got != "failing" {
		t.Errorf("health %q", got)
	}
	if got := d.text(row + " .catalog-error"); got != "catalog answered 404 <b>" {
		t.Errorf("last error %q", got)
	}
	if got := d.text(row + " .catalog-agents"); got != "1" {
		t.Errorf("agents %q", got)
	}
	if d.count(`nav a[href="/admin/catalogs"]`) != 1 {
		t.Error("the admin nav does not link the catalogs page")
	}
	// A cross-site POST changes nothing.
	for _, hdr := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}} {
		wantStatus(t, e.do("POST", "/admin/catalogs/"+cat.ID+"/remove", nil, mergeHdr(e.asAdmin(tok), hdr)), 403)
	}
	wantStatus(t, e.do("GET", "/admin/catalogs/"+cat.ID+"/remove", nil, e.asAdmin(tok)), 405)
	if got := d.text(row + " .catalog-actions"); got != "Pause Remove" {
		t.Errorf("actions %q", got)
	}
	for range 2 {
		wantStatus(t, e.do("POST", "/admin/catalogs/"+cat.ID+"/pause", nil, e.asAdmin(tok)), 303)
	}
	d = parse(t, e.do("GET", "/admin/catalogs?done=pause", nil, e.asAdmin(tok)))
	if got := d.text(row + " .catalog-status"); got != "paused" || d.text(row+" .catalog-actions") != "Resume Remove" {
		t.Errorf("after pause: status %q, forms %q", got, d.text(row+" .catalog-actions"))
	}
	if !strings.HasPrefix(d.text(`p.alert.ok`), "Catalog paused") {
		t.Errorf("confirmation %q", d.text(`p.alert.ok`))
	}
	wantStatus(t, e.do("POST", "/admin/catalogs/"+cat.ID+"/resume", nil, e.asAdmin(tok)), 303)
	wantStatus(t, e.do("POST", "/admin/catalogs/"+cat.ID+"/remove", nil, e.asAdmin(tok)), 303)
	d = parse(t, e.do("GET", "/admin/catalogs?done=remove", nil, e.asAdmin(tok)))
	if got := d.text(row + " .catalog-status"); got != "removed" || d.count(row+" form") != 0 {
		t.Errorf("after remove: status %q, actions %q", got, d.text(row+" .catalog-actions"))
	}
	r := e.do("POST", "/admin/catalogs/"+cat.ID+"/resume", nil, e.asAdmin(tok))
	wantStatus(t, r, 409)
	if got := parse(t, r).text("#catalog-error"); got != "A removed catalog cannot be paused or resumed." {
		t.Errorf("error %q", got)
	}
	wantStatus(t, e.do("POST", "/admin/catalogs/nope/pause", nil, e.asAdmin(tok)), 404)
	entries, _, err := e.svc.Audit(ctx, adminP, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, en := range entries {
		if strings.HasPrefix(en.Action, "catalog-") {
			actions = append(actions, en.Action)
		}
	}
	if strings.Join(actions, ",") != "catalog-pause,catalog-resume,catalog-remove" {
		t.Errorf("audit %v", actions)
	}
	// The audit page says it in words.
	d = parse(t, e.do("GET", "/admin/audit?action=catalog-remove", nil, e.asAdmin(tok)))
	if got, want := d.text("main table"), "catalog "+cat.URL+"; was active; 1 agent kept"; !strings.Contains(got, want) {
		t.Errorf("audit page %q lacks %q", got, want)
	}
}
