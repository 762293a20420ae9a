package web_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Search as you type: typing updates the result list without a page load,
// and the URL follows the query.
func TestBrowserSearchAsYouType(t *testing.T) {
	e, ids := catalogueEnv(t)
	ctx := tab(t)
	var n int
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.Evaluate(`window.__noReload = true; document.querySelectorAll("li.result").length`, &n),
	)
	if n != 5 {
		t.Fatalf("%d results before typing, want 5", n)
	}
	screenshot(t, ctx, "catalogue.png")
	// What the server renders for the query without JavaScript is what
	// the live list must show.
	want := resultIDs(parse(t, e.get("/?q=hotel")))
	if len(want) == 0 || len(want) >= 5 {
		t.Fatalf("q=hotel renders %v: not a narrowing query", want)
	}
	var sameDoc bool
	var loc string
	var got []string
	run(t, ctx,
		chromedp.SendKeys("#q", "hotel", chromedp.ByID),
		chromedp.Poll(`location.search === "?q=hotel" && document.querySelectorAll("li.result").length === `+strconv.Itoa(len(want)), nil),
		chromedp.Evaluate(`window.__noReload === true`, &sameDoc),
		chromedp.Location(&loc),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("li.result")).map(e => e.dataset.agentId).sort()`, &got),
	)
	if !sameDoc {
		t.Error("the page was reloaded while typing")
	}
	if u, _ := url.Parse(loc); u.Query().Get("q") != "hotel" {
		t.Errorf("URL %q does not hold the query", loc)
	}
	if !slices.Equal(got, want) || !slices.Contains(got, ids["hotel"]) {
		t.Errorf("live results %v, want %v with the hotel agent", got, want)
	}
	var marks string
	run(t, ctx, chromedp.Text(`li.result[data-agent-id="`+ids["hotel"]+`"]`, &marks, chromedp.ByQuery))
	if !strings.Contains(strings.ToLower(marks), "hotel") {
		t.Errorf("hotel result text %q", marks)
	}
	var marked int
	run(t, ctx, chromedp.Evaluate(`document.querySelectorAll("li.result mark").length`, &marked))
	if marked == 0 {
		t.Error("no highlighted match in the live results")
	}
	// Shareable: loading the URL fresh shows the same results.
	run(t, ctx, chromedp.Navigate(loc), chromedp.WaitVisible("li.result", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("li.result")).map(e => e.dataset.agentId).sort()`, &got))
	if !slices.Equal(got, want) {
		t.Errorf("shared URL results %v", got)
	}
}

// Facet filtering: clicking a facet changes the URL and the results.
func TestBrowserFacetFiltering(t *testing.T) {
	e, ids := catalogueEnv(t)
	ctx := tab(t)
	var loc string
	var got []string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/"),
		chromedp.Click(`section[data-facet=binding] a[data-value=GRPC]`, chromedp.ByQuery),
		chromedp.WaitVisible(`ul.active-filters`, chromedp.ByQuery),
		chromedp.Location(&loc),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("li.result")).map(e => e.dataset.agentId)`, &got),
	)
	if !strings.HasSuffix(loc, "/?binding=GRPC") {
		t.Errorf("URL after the click %q", loc)
	}
	if len(got) != 1 || got[0] != ids["geo"] {
		t.Errorf("results %v, want the geo agent", got)
	}
	// Typing keeps the active filter (hidden fields of the search form).
	run(t, ctx,
		chromedp.SendKeys("#q", "route", chromedp.ByID),
		chromedp.Poll(`new URLSearchParams(location.search).get("q") === "route"`, nil),
		chromedp.Location(&loc),
	)
	if u, _ := url.Parse(loc); u.Query().Get("binding") != "GRPC" {
		t.Errorf("typing dropped the facet filter: %q", loc)
	}
	// Opening the agent page from the result.
	var h1 string
	run(t, ctx,
		chromedp.Click(`li.result h2 a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#connect`, chromedp.ByID),
		chromedp.Text("h1", &h1, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if h1 != "GeoSpatial Route Planner Agent" || !strings.HasSuffix(loc, "/agents/"+ids["geo"]) {
		t.Errorf("agent page %q at %q", h1, loc)
	}
	// The copy button exists only where the script can make it work.
	var copyShown bool
	run(t, ctx, chromedp.Evaluate(`document.querySelector("button.copy[data-copy='#raw-json']").hidden === false`, &copyShown))
	if !copyShown {
		t.Error("the copy button stays hidden with JavaScript")
	}
	screenshot(t, ctx, "agent.png")
}
