package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/registry"
)

// No page scrolls sideways on a 390 px phone: agent pages with liveness
// results (the per-interface table), signatures with long key ids and
// thumbprints, the tokens page with long names and hosts, the flagged
// review page, and every other admin page.
func TestBrowserEveryPageFitsAPhone(t *testing.T) {
	e := newEnv(t)
	longHost := "a-very-long-subdomain-name-for-a-geo-agent.example.com"
	geo := e.submit(longHost)
	thumb := "Zx3nQm0b9Hc1yT8vWq2LkR7pFs4JdGa6Ue5Mi0Xo_-NbVhCtYwKz"
	e.record(geo.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustVerified,
		signatures: []registry.SignatureResult{
			{Kid: "key-2026-rotation-primary-0123456789abcdef-0123456789abcdef", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: thumb},
			{Index: 1, Kid: "legacy-key-without-a-short-name-0123456789", Alg: "RS256", KeySource: "jku", Status: "invalid", Reason: "no profile verifies under a trusted key with this kid"},
		}, thumbs: []string{thumb}})
	e.approve(geo.ID)
	e.probe(geo.ID, "answering", "unreachable", "nonconformant")
	// A verified agent that now serves a card signed by a key never seen
	// verifying it: the review page names that key's full thumbprint.
	tok := e.adminToken()
	fl := e.submit("flagged-agent-with-a-rather-long-host-name.example.com")
	e.record(fl.ID, fetched{raw: readCard(t, "hotel.json"), trust: registry.TrustVerified,
		signatures: []registry.SignatureResult{{Kid: "k1", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: thumb}},
		thumbs:     []string{thumb}})
	e.approve(fl.ID)
	other := "Qp7vLr2mXk9sTz4wNb6yHc1dFg8jKa3eUo5iRt0_-MnBvCxZlWqEp"
	e.record(fl.ID, fetched{raw: withCard(t, "hotel.json", map[string]any{"description": "Signed by a new key."}), trust: registry.TrustVerified,
		signatures: []registry.SignatureResult{{Kid: "k2-rotated-without-notice-0123456789abcdef", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: other}},
		thumbs:     []string{other}})
	flagged := fl.ID
	if d := parse(t, e.do("GET", "/admin?view=flagged", nil, e.asAdmin(tok))); len(resultRowIDs(d)) != 1 {
		t.Fatalf("the new-key agent is not flagged: %v", resultRowIDs(d))
	}
	for _, name := range []string{"dashboards-reader-for-the-payments-platform-team", "publisher-x"} {
		req := registry.TokenRequest{Role: registry.RoleReader, Name: name}
		if name == "publisher-x" {
			req = registry.TokenRequest{Role: registry.RolePublisher, Name: name,
				Hosts: []string{"one-very-long-publisher-host-name.example.com", "another-long-publisher-host.example.org"}}
		}
		if _, _, err := e.svc.CreateToken(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	// A catalog with a long URL and a long last error.
	if _, err := e.svc.Submit(context.Background(), registry.Anonymous, "catalog-host-with-a-rather-long-subdomain-name.example.com", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RecordCatalog(context.Background(), registry.CatalogCrawl{
		URL:        "https://catalog-host-with-a-rather-long-subdomain-name.example.com/.well-known/ai-catalog.json",
		Error:      "fetch https://catalog-host-with-a-rather-long-subdomain-name.example.com/.well-known/ai-catalog.json: dial tcp: lookup catalog-host-with-a-rather-long-subdomain-name.example.com: no such host",
		ErrorClass: "dns", NextCrawlAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.sync()
	ctx := tab(t)
	public := []string{"/", "/?q=geo", "/agents/" + geo.ID, "/agents/" + geo.ID + "/versions", "/tags", "/legend", "/publish"}
	for _, path := range public {
		if over := overflowAt(t, ctx, e.srv.URL+path, 390); over > 0 {
			t.Errorf("%s is %d px wider than a 390 px screen", path, over)
		}
	}
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin"),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible("#pending", chromedp.ByID),
	)
	admin := []string{"/admin", "/admin?view=flagged", "/admin?view=failing", "/admin/audit", "/admin/tokens", "/admin/catalogs",
		"/admin/agents/" + flagged, "/admin/agents/" + geo.ID, "/agents/" + geo.ID}
	for _, path := range admin {
		if over := overflowAt(t, ctx, e.srv.URL+path, 390); over > 0 {
			var wide []string
			run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(e.srv.URL+path), chromedp.WaitReady("main", chromedp.ByQuery),
				chromedp.Evaluate(`Array.from(document.querySelectorAll("body *")).filter(x => x.getBoundingClientRect().right > 392).map(x => x.tagName+"."+x.className+" "+x.textContent.slice(0,60))`, &wide))
			t.Log(wide)
			t.Errorf("signed in, %s is %d px wider than a 390 px screen", path, over)
		}
	}
	// Buttons keep their words whole: "Revoke" or "Remove" never wraps a
	// letter per line.
	for _, path := range []string{"/admin/tokens", "/admin/catalogs"} {
		var tall []string
		run(t, ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(e.srv.URL+path), chromedp.WaitReady("main", chromedp.ByQuery),
			chromedp.Evaluate(`Array.from(document.querySelectorAll("main button")).filter(b => b.getBoundingClientRect().height > 3 * parseFloat(getComputedStyle(b).fontSize)).map(b => b.textContent.trim())`, &tall),
			chromedp.EmulateViewport(1280, 800))
		if len(tall) > 0 {
			t.Errorf("buttons wrap on %s at 390 px: %q", path, tall)
		}
	}
}

// On a phone the search filters come before the results, where a visitor
// looks for them; on a wide screen they sit beside the results.
func TestBrowserFiltersBeforeResultsOnPhones(t *testing.T) {
	e := newEnv(t)
	e.listed("geo.example.com", "geospatial.json")
	e.listed("hotel.example.com", "hotel.json")
	e.sync()
	ctx := tab(t)
	type box struct{ Top, Left, ResultsTop, ResultsLeft float64 }
	for _, w := range []int64{390, 1280} {
		var b box
		run(t, ctx, chromedp.EmulateViewport(w, 844), chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible("#facets", chromedp.ByID),
			chromedp.Evaluate(`(() => { const f = document.querySelector("#facets").getBoundingClientRect(), r = document.querySelector("#results").getBoundingClientRect(); return {Top: f.top, Left: f.left, ResultsTop: r.top, ResultsLeft: r.left}; })()`, &b),
			chromedp.EmulateViewport(1280, 800))
		switch {
		case w == 390 && b.Top >= b.ResultsTop:
			t.Errorf("at 390 px the filters (top %v) come after the results (top %v)", b.Top, b.ResultsTop)
		case w == 1280 && b.Left == b.ResultsLeft:
			t.Errorf("at 1280 px the filters are not beside the results: %+v", b)
		}
	}
}
