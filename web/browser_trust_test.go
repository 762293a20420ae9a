package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/registry"
)

// A page at 390 px (a phone) never scrolls sideways: the signature table,
// long hosts and URLs wrap or scroll inside their own box.
func TestBrowserNoSidewaysScrollAt390(t *testing.T) {
	e := newEnv(t)
	geo := e.submit("a-very-long-subdomain-name-for-a-geo-agent.example.com")
	e.record(geo.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustInvalid,
		signatures: []registry.SignatureResult{
			{Kid: "key-2026-rotation-primary-0123456789abcdef", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: "tp"},
			{Index: 1, Kid: "legacy-key-without-a-short-name", Alg: "RS256", KeySource: "jku", Status: "invalid", Reason: "no profile verifies under a trusted key with this kid"},
		}})
	e.approve(geo.ID)
	e.listed("hotel.example.com", "hotel.json")
	e.sync()
	tok := e.adminToken()
	ctx := tab(t)
	for _, path := range []string{"/", "/agents/" + geo.ID, "/legend", "/publish"} {
		if over := overflowAt(t, ctx, e.srv.URL+path, 390); over > 0 {
			t.Errorf("%s is %d px wider than a 390 px screen", path, over)
		}
	}
	// Facet counts stay on one line beside their value ("1 / 0" wrapped).
	for _, w := range []int64{390, 1280} {
		var wrapped []string
		run(t, ctx, chromedp.EmulateViewport(w, 844), chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible("#facets", chromedp.ByID),
			chromedp.Evaluate(`Array.from(document.querySelectorAll(".facet-link .count")).filter(c => c.getClientRects().length !== 1 || c.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(c).fontSize)).map(c => c.closest("a").dataset.value)`, &wrapped),
			chromedp.EmulateViewport(1280, 800))
		if len(wrapped) > 0 {
			t.Errorf("at %d px, the counts of %v wrap", w, wrapped)
		}
	}
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin"),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible("#pending", chromedp.ByID),
	)
	for _, path := range []string{"/admin?view=invalid", "/admin/audit", "/admin/agents/" + geo.ID} {
		if over := overflowAt(t, ctx, e.srv.URL+path, 390); over > 0 {
			t.Errorf("%s is %d px wider than a 390 px screen", path, over)
		}
	}
}

// The trust story a visitor sees: a tampered card's banner, badges that
// say what they measure and lead to the legend.
func TestBrowserInvalidBannerAndLegend(t *testing.T) {
	e := newEnv(t)
	id := e.listed("geo.example.com", "geospatial.json")
	e.record(id, fetched{raw: withCard(t, "geospatial.json", map[string]any{"version": "2.0.0"}), trust: registry.TrustInvalid,
		signatures: []registry.SignatureResult{{Kid: "key-1", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "invalid", Reason: "the signature does not match the card"}}})
	flagged := flaggedAgent(e, "hotel.example.com")
	e.sync()
	ctx := tab(t)
	var banner, badge, loc, legend string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/agents/"+id),
		chromedp.WaitVisible("#invalid-banner", chromedp.ByID),
		chromedp.Text("#invalid-banner strong", &banner, chromedp.ByQuery),
	)
	if banner != "This card's signature does not verify." {
		t.Errorf("banner %q", banner)
	}
	screenshot(t, ctx, "agent-invalid.png")
	run(t, ctx,
		chromedp.Text("header.agent-head a.trust-invalid", &badge, chromedp.ByQuery),
		chromedp.Click("header.agent-head a.trust-invalid", chromedp.ByQuery),
		chromedp.WaitVisible("#signature-invalid", chromedp.ByID),
		chromedp.Location(&loc),
		chromedp.Text("#signature-invalid + dd", &legend, chromedp.ByQuery),
	)
	if badge != "✖ signature: invalid" || !strings.HasSuffix(loc, "/legend#signature-invalid") {
		t.Errorf("badge %q led to %q", badge, loc)
	}
	if !strings.HasPrefix(legend, "A signature does not verify") {
		t.Errorf("legend says %q", legend)
	}
	screenshot(t, ctx, "legend.png")
	var review string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/agents/"+flagged),
		chromedp.WaitVisible("#review-banner", chromedp.ByID),
		chromedp.Text("#review-banner strong", &review, chromedp.ByQuery),
	)
	if review != "A newer card is waiting for review." {
		t.Errorf("review banner %q", review)
	}
	screenshot(t, ctx, "agent-review-waiting.png")
}

// Curation at scale in the browser: pick rows of a queue tab, one
// decision and reason, and see what was done.
func TestBrowserQueueBulkDecision(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for _, h := range []string{"one.example.com", "two.example.com", "three.example.com"} {
		a := e.submit(h)
		e.record(a.ID, fetched{raw: readCard(t, "currency.json")})
		ids = append(ids, a.ID)
	}
	flaggedAgent(e, "hotel.example.com")
	tok := e.adminToken()
	ctx := tab(t)
	var done string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin"),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible("#pending", chromedp.ByID),
	)
	screenshot(t, ctx, "admin-queue.png")
	run(t, ctx,
		chromedp.Click(`#pick-`+ids[0], chromedp.ByQuery),
		chromedp.Click(`#pick-`+ids[2], chromedp.ByQuery),
		chromedp.SetValue("#bulk-action", "reject", chromedp.ByID),
		chromedp.SendKeys("#bulk-reason", "duplicate listings", chromedp.ByID),
		chromedp.Click(`#bulk button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible("#bulk-done", chromedp.ByID),
		chromedp.Text("#bulk-done", &done, chromedp.ByID),
	)
	if done != "Rejected 2 agents." {
		t.Errorf("summary %q", done)
	}
	for i, id := range ids {
		a, err := e.svc.Get(t.Context(), adminP, id)
		if err != nil {
			t.Fatal(err)
		}
		want := registry.StatusRejected
		if i == 1 {
			want = registry.StatusPending
		}
		if a.Status != want {
			t.Errorf("agent %d %s, want %s", i, a.Status, want)
		}
	}
	var rows []string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/admin/audit?action=reject"),
		chromedp.WaitVisible("table.audit", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("tr.audit-entry td.agent a:first-child")).map(a => a.textContent)`, &rows),
	)
	if len(rows) != 2 || rows[0] != "Currency Conversion Agent" {
		t.Errorf("audit rows %q", rows)
	}
	screenshot(t, ctx, "admin-audit.png")
}
