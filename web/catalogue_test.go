package web_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// catalogueEnv lists five real cards and leaves one pending.
func catalogueEnv(t *testing.T) (*env, map[string]string) {
	e := newEnv(t)
	ids := map[string]string{
		"geo":       e.listed("geo.example.com", "geospatial.json"),
		"hotel":     e.listed("hotel.example.com", "hotel.json"),
		"currency":  e.listed("currency.example.com", "currency.json"),
		"buywhere":  e.listed("buywhere.example.com", "buywhere.json"),
		"toolroute": e.listed("toolroute.example.com", "toolroute.json"),
	}
	p := e.submit("pending.example.com")
	e.record(p.ID, fetched{raw: readCard(t, "cafe-signed.json")})
	ids["pending"] = p.ID
	e.sync()
	return e, ids
}

func resultIDs(d doc) []string {
	var out []string
	for _, n := range d.all("li.result") {
		v, _ := attr(n, "data-agent-id")
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func facetCounts(d doc, param string) map[string]string {
	out := map[string]string{}
	for _, a := range d.all(`section[data-facet=` + param + `] a.facet-link`) {
		v, _ := attr(a, "data-value")
		c := ""
		if cs := all(a, "span.count"); len(cs) > 0 {
			c = text(cs[0])
		}
		out[v] = c
	}
	return out
}

func TestCatalogueListsApprovedAgentsWithFacets(t *testing.T) {
	e, ids := catalogueEnv(t)
	r := e.get("/")
	wantStatus(t, r, 200)
	d := parse(t, r)
	got := resultIDs(d)
	want := []string{ids["geo"], ids["hotel"], ids["currency"], ids["buywhere"], ids["toolroute"]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("results %v, want the five approved agents %v (not the pending one)", got, want)
	}
	if got := d.text("#total"); got != "5 agents" {
		t.Errorf("total %q", got)
	}
	bindings := facetCounts(d, "binding")
	// geo declares JSONRPC, GRPC and HTTP+JSON; the other four JSONRPC (v0.3 preferredTransport or default).
	if bindings["GRPC"] != "1" || bindings["HTTP+JSON"] != "1" {
		t.Errorf("binding facet %v", bindings)
	}
	tags := facetCounts(d, "tag")
	if tags["maps"] != "1" || tags["currency"] == "" {
		t.Errorf("tag facet %v", tags)
	}
	trust := facetCounts(d, "trust")
	if trust["unsigned"] != "5" {
		t.Errorf("trust facet %v", trust)
	}
	if n := d.count(`section[data-facet=status]`); n != 0 {
		t.Errorf("anonymous visitors see %d status facets, want 0", n)
	}
	// Result cards carry name, provider, badges.
	geo := all(d.root, `li[data-agent-id=`+ids["geo"]+`]`)[0]
	if got := text(all(geo, "h2.result-name")[0]); got != "GeoSpatial Route Planner Agent" {
		t.Errorf("geo name %q", got)
	}
	if got := text(all(geo, "span.provider")[0]); got != "by Example Geo Services Inc." {
		t.Errorf("geo provider %q", got)
	}
	if len(all(geo, "a.trust-unsigned")) != 1 || len(all(geo, "a.health-ok")) != 1 {
		t.Error("geo lacks its trust or health badge")
	}
}

func TestCatalogueFacetFilterAndSearchHighlights(t *testing.T) {
	e, ids := catalogueEnv(t)
	d := parse(t, e.get("/"))
	var grpc string
	for _, a := range d.all(`section[data-facet=binding] a.facet-link`) {
		if v, _ := attr(a, "data-value"); v == "GRPC" {
			grpc, _ = attr(a, "href")
		}
	}
	if grpc != "/?binding=GRPC" {
		t.Fatalf("GRPC facet links to %q", grpc)
	}
	r := e.get(grpc)
	wantStatus(t, r, 200)
	d = parse(t, r)
	if got := resultIDs(d); !slices.Equal(got, []string{ids["geo"]}) {
		t.Fatalf("binding=GRPC results %v", got)
	}
	on := d.one(`section[data-facet=binding] a.on`)
	if href, _ := attr(on, "href"); href != "/" {
		t.Errorf("the active facet should link back to the unfiltered catalogue, links to %q", href)
	}
	if got := texts(d.all("ul.active-filters a.chip")); len(got) != 1 || !strings.Contains(got[0], "Bindings: GRPC") {
		t.Errorf("active filters %v", got)
	}

	// Full-text search: the matching skill is shown with <mark> highlights.
	r = e.get("/?" + url.Values{"q": {"traffic routes"}}.Encode())
	wantStatus(t, r, 200)
	d = parse(t, r)
	if got := resultIDs(d); !slices.Contains(got, ids["geo"]) {
		t.Fatalf("q=traffic routes results %v", got)
	}
	marks := texts(d.all(`li.result ul.matched mark`))
	if len(marks) == 0 {
		t.Fatalf("no highlighted skill match:\n%s", clip(r.body))
	}
	for _, m := range marks {
		if l := strings.ToLower(m); !strings.HasPrefix(l, "traffic") && !strings.HasPrefix(l, "rout") {
			t.Errorf("highlighted %q", m)
		}
	}
	// The query stays in the box and in hidden fields for the filters.
	if v, _ := attr(d.one("input#q"), "value"); v != "traffic routes" {
		t.Errorf("search box holds %q", v)
	}
}

func TestCataloguePaginationKeepsTheQuery(t *testing.T) {
	e := newEnv(t)
	for _, h := range []string{"a1", "a2", "a3"} {
		e.listed(h+".example.com", "hotel.json")
	}
	e.sync()
	// pageSize is not a UI parameter: the default page is 20, so page with
	// a filter over 25 agents instead.
	for i := range 22 {
		e.listed("b"+string(rune('a'+i))+".example.com", "currency.json")
	}
	e.sync()
	d := parse(t, e.get("/?tag=currency"))
	if got := d.text("#total"); got != "22 agents" {
		t.Fatalf("total %q", got)
	}
	if n := d.count("li.result"); n != 20 {
		t.Fatalf("first page holds %d results, want 20", n)
	}
	next, _ := attr(d.one(`nav.pager a[rel=next]`), "href")
	u, _ := url.Parse(next)
	if u.Query().Get("tag") != "currency" || u.Query().Get("pageToken") == "" {
		t.Fatalf("next link %q loses the query", next)
	}
	d2 := parse(t, e.get(next))
	if n := d2.count("li.result"); n != 2 {
		t.Fatalf("second page holds %d results, want 2", n)
	}
	if d2.count(`nav.pager a[rel=next]`) != 0 {
		t.Error("the last page links to a next page")
	}
	if first, _ := attr(d2.one(`nav.pager a[rel=first]`), "href"); first != "/?tag=currency" {
		t.Errorf("first-page link %q", first)
	}
	seen := map[string]bool{}
	for _, id := range append(resultIDs(d), resultIDs(d2)...) {
		if seen[id] {
			t.Errorf("agent %s on both pages", id)
		}
		seen[id] = true
	}
	wantStatus(t, e.get("/?tag=currency&pageToken=garbage"), 400)
}

func TestCatalogueAdminSeesEverythingWithStatusFilters(t *testing.T) {
	e, ids := catalogueEnv(t)
	tok := e.adminToken()
	r := e.do("GET", "/?status=pending", nil, e.asAdmin(tok))
	wantStatus(t, r, 200)
	d := parse(t, r)
	if got := resultIDs(d); !slices.Equal(got, []string{ids["pending"]}) {
		t.Fatalf("admin status=pending results %v", got)
	}
	if d.count(`section[data-facet=status] a.on`) != 1 {
		t.Error("the status facet is not shown as active for the admin")
	}
	// The same URL anonymously ignores the admin-only filter.
	d = parse(t, e.get("/?status=pending"))
	if got := resultIDs(d); slices.Contains(got, ids["pending"]) || len(got) != 5 {
		t.Fatalf("anonymous status=pending results %v", got)
	}
}

// docs/threats.md H.74: the search fragments the catalogue shows are
// escaped; card markup in a matching skill reaches the page as text.
func TestH74SearchFragmentsAreEscaped(t *testing.T) {
	e := newEnv(t)
	card := `{"name":"Mark <b>Agent</b>","description":"d","version":"1",` +
		`"supportedInterfaces":[{"url":"https://m.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"s","name":"<img src=x onerror=alert(1)> zebra","description":"zebra <script>alert(1)</script> crossing","tags":["zebra"]}]}`
	a := e.submit("m.example.com")
	e.record(a.ID, fetched{raw: []byte(card)})
	e.approve(a.ID)
	e.sync()
	res, err := e.idx.Search(t.Context(), search.Query{Q: "zebra"})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search: %v %+v", err, res)
	}
	for _, m := range res.Hits[0].Matches {
		for _, f := range m.Fragments {
			if strings.Contains(f, "<script") || strings.Contains(f, "<img") {
				t.Errorf("the index returned an unescaped fragment %q", f)
			}
		}
	}
	r := e.get("/?q=zebra")
	wantStatus(t, r, 200)
	d := parse(t, r)
	if n := d.count("script") - 1; n != 0 { // the one is app.js
		t.Errorf("%d script elements from card text", n)
	}
	if n := d.count("img") + d.count("b"); n != 0 {
		t.Errorf("%d img/b elements from card text", n)
	}
	frags := texts(d.all("ul.matched span.frag"))
	if !containsSub(frags, "<script>alert(1)</script>") {
		t.Errorf("fragments %q do not show the markup as text", frags)
	}
	if d.count("ul.matched mark") == 0 {
		t.Error("no highlight")
	}
}

// docs/threats.md G.72: the index still holds agents that SQL has since
// suspended, removed or made internal (no sync after the changes); the
// catalogue hydrates hits from SQL and must not show them to anonymous
// visitors, while an admin still finds the suspended and removed ones.
func TestCatalogueG72StaleIndexNeverLeaks(t *testing.T) {
	e, ids := catalogueEnv(t)
	ctx := t.Context()
	if _, err := e.svc.Act(ctx, adminP, ids["hotel"], registry.ActionSuspend, registry.ActionRequest{Reason: "abuse"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Act(ctx, adminP, ids["geo"], registry.ActionRemove, registry.ActionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SetVisibility(ctx, adminP, ids["currency"], registry.VisibilityInternal); err != nil {
		t.Fatal(err)
	}
	got := resultIDs(parse(t, e.get("/")))
	want := []string{ids["buywhere"], ids["toolroute"]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("anonymous catalogue over a stale index = %v, want %v", got, want)
	}
	r := e.do("GET", "/", nil, e.asAdmin(e.adminToken()))
	wantStatus(t, r, 200)
	if adminIDs := resultIDs(parse(t, r)); !slices.Contains(adminIDs, ids["hotel"]) {
		t.Fatalf("admin catalogue %v lacks the suspended agent", adminIDs)
	}
}

// The catalogue lists through search.Find like every other face, so a
// filter on a SQL column is re-checked against SQL over a stale index
// (docs/threats.md G.72): an agent suspended since the index caught up is
// not listed under status=approved, and shows under status=suspended only
// once the index holds it.
func TestCatalogueRechecksFiltersAgainstSQL(t *testing.T) {
	e, ids := catalogueEnv(t)
	if _, err := e.svc.Act(t.Context(), adminP, ids["hotel"], registry.ActionSuspend, registry.ActionRequest{Reason: "abuse"}); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/?status=approved", nil, e.asAdmin(e.adminToken()))
	wantStatus(t, r, 200)
	want := []string{ids["geo"], ids["currency"], ids["buywhere"], ids["toolroute"]}
	slices.Sort(want)
	if got := resultIDs(parse(t, r)); !slices.Equal(got, want) {
		t.Fatalf("admin status=approved over a stale index = %v, want %v (the suspended hotel left out)", got, want)
	}
}

// Every filter of the one filter table (search.FilterTable) is read from
// the catalogue's URL and shown as an active filter; a value outside an
// enumeration is the visitor's mistake, as on the API.
func TestCatalogueReadsEveryFilterOfTheTable(t *testing.T) {
	e, _ := catalogueEnv(t)
	tok := e.adminToken()
	for _, f := range search.FilterTable() {
		v := "x"
		if f.Values != nil {
			v = f.Values[len(f.Values)-1]
		}
		r := e.do("GET", "/?"+url.Values{f.Name: {v}}.Encode(), nil, e.asAdmin(tok))
		wantStatus(t, r, 200)
		d := parse(t, r)
		var chips []string
		for _, a := range d.all("ul.active-filters a") {
			l, _ := attr(a, "aria-label")
			chips = append(chips, l)
		}
		if want := []string{"Remove filter " + f.Title + ": " + v}; !slices.Equal(chips, want) {
			t.Errorf("%s=%s: active filters %q, want %q", f.Name, v, chips, want)
		}
		if f.Values != nil {
			r := e.do("GET", "/?"+f.Name+"=no-such-value", nil, e.asAdmin(tok))
			wantStatus(t, r, 400)
		}
	}
}
