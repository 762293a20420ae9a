package web_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// withCard returns the testdata card with its top-level members replaced.
func withCard(t testing.TB, name string, set map[string]any) []byte {
	t.Helper()
	var card map[string]any
	if err := json.Unmarshal(readCard(t, name), &card); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(card, k)
			continue
		}
		card[k] = v
	}
	b, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Badges say what they measure and link to the legend, which explains
// every value the badge can take.
func TestBadgesSayWhatTheyMeasureAndTheLegendExplainsThem(t *testing.T) {
	e := newEnv(t)
	id := e.listed("geo.example.com", "geospatial.json")
	e.sync()
	d := parse(t, e.get("/agents/"+id))
	if got := d.text("header.agent-head a.trust-unsigned"); got != "signature: unsigned" {
		t.Errorf("trust badge %q", got)
	}
	if got := d.text("header.agent-head a.health-ok"); got != "health: ok" {
		t.Errorf("health badge %q", got)
	}
	if got := d.text("header.agent-head a.status-approved"); got != "status: approved" {
		t.Errorf("status badge %q", got)
	}
	href, _ := attr(d.one("header.agent-head a.trust-unsigned"), "href")
	if href != "/legend#signature-unsigned" {
		t.Errorf("trust badge links to %q", href)
	}
	title, _ := attr(d.one("header.agent-head a.trust-unsigned"), "title")
	if !strings.HasPrefix(title, "The card carries no signature.") {
		t.Errorf("trust badge tooltip %q", title)
	}
	r := e.get("/legend")
	wantStatus(t, r, 200)
	l := parse(t, r)
	for _, v := range []string{"verified", "unsigned", "untrusted", "invalid", "error", "unknown"} {
		if got := text(l.one("dt#signature-" + v)); got != "signature: "+v {
			t.Errorf("legend entry %s reads %q", v, got)
		}
	}
	for _, v := range []string{"ok", "failing", "gone", "unknown"} {
		l.one("dt#health-" + v)
	}
	for _, v := range []string{"approved", "pending", "rejected", "suspended", "removed"} {
		l.one("dt#status-" + v)
	}
	// The lede counts the badges the legend explains (it said "three"
	// while explaining four).
	words := map[int]string{3: "three", 4: "four", 5: "five"}
	badges := l.count("dl.legend-list")
	if got := l.text("p.lede"); badges != 4 || !strings.Contains(got, "Every agent shows "+words[badges]+" badges.") {
		t.Errorf("legend lede %q does not count %d badges", got, badges)
	}
	if got := l.text("#signature"); !strings.Contains(got, "/.well-known/jwks.json") {
		t.Errorf("the legend does not say which keys Cardex trusts: %q", got)
	}
}

// An agent whose current card does not verify gets a banner, not only a
// badge; approved agents in that state are listed in the admin queue.
func TestInvalidCardBannerAndQueue(t *testing.T) {
	e := newEnv(t)
	id := e.listed("geo.example.com", "geospatial.json")
	ok := e.listed("hotel.example.com", "hotel.json")
	// The unsigned card is replaced by one whose signature fails: not a
	// regression from verified, so it becomes current.
	e.record(id, fetched{raw: withCard(t, "geospatial.json", map[string]any{"version": "2.0.0"}), trust: registry.TrustInvalid,
		signatures: []registry.SignatureResult{{Kid: "k1", Alg: "ES256", KeySource: "well-known", Status: "invalid", Reason: "signature does not verify"}}})
	e.sync()
	d := parse(t, e.get("/agents/"+id))
	if got := d.text("#invalid-banner"); !strings.HasPrefix(got, "This card's signature does not verify.") {
		t.Errorf("banner %q", got)
	}
	if n := parse(t, e.get("/agents/"+ok)).count("#invalid-banner"); n != 0 {
		t.Errorf("an unsigned agent shows %d invalid banners", n)
	}
	tok := e.adminToken()
	q := parse(t, e.do("GET", "/admin?view=invalid", nil, e.asAdmin(tok)))
	if got := resultRowIDs(q); strings.Join(got, ",") != id {
		t.Errorf("invalid queue %v, want [%s]", got, id)
	}
	if got := q.text(`a[data-view=invalid] .count`); got != "1" {
		t.Errorf("invalid tab count %q", got)
	}
}

func resultRowIDs(d doc) []string {
	var out []string
	for _, n := range d.all("tr.queue-row") {
		v, _ := attr(n, "data-agent-id")
		out = append(out, v)
	}
	return out
}

// A trust regression waiting for review is announced on the public page,
// to anonymous visitors, above the card it keeps showing.
func TestPublicPageSaysANewerCardWaitsForReview(t *testing.T) {
	e := newEnv(t)
	id := flaggedAgent(e, "hotel.example.com")
	e.sync()
	d := parse(t, e.get("/agents/"+id))
	if got := d.text("header.agent-head #review-banner"); !strings.HasPrefix(got, "A newer card is waiting for review.") {
		t.Errorf("review banner %q", got)
	}
	if got := d.text("p.lede"); strings.Contains(got, "Now unsigned.") {
		t.Errorf("the page shows the candidate's description %q", got)
	}
}

// Two agents with the same name are told apart by their host, in the
// catalogue and on their pages.
func TestIdenticalNamesShowTheirHost(t *testing.T) {
	e := newEnv(t)
	a := e.listed("hotel.example.com", "hotel.json")
	b := e.listed("copycat.example.net", "hotel.json")
	e.sync()
	d := parse(t, e.get("/"))
	hosts := map[string]string{}
	for _, li := range d.all("li.result") {
		id, _ := attr(li, "data-agent-id")
		hosts[id] = text(all(li, "span.host")[0])
	}
	if hosts[a] != "hotel.example.com" || hosts[b] != "copycat.example.net" {
		t.Errorf("hosts in results %v", hosts)
	}
	if got := parse(t, e.get("/agents/"+b)).text("dd.host"); got != "copycat.example.net" {
		t.Errorf("agent page host %q", got)
	}
}

// The small fixes of the agent page and the catalogue.
func TestAgentPageAndCatalogueFixes(t *testing.T) {
	e := newEnv(t)
	// Empty catalogue on a fresh server: not "no agents match".
	d := parse(t, e.get("/"))
	if got := d.text("#empty-catalogue"); !strings.HasPrefix(got, "No agents are listed yet.") {
		t.Errorf("fresh catalogue says %q", got)
	}
	if got := d.text("#sort option[selected]"); got != "Trusted and healthy first" {
		t.Errorf("default order is labelled %q without a query", got)
	}
	// No default modes: said in words, not "in ; out".
	noModes := e.listed("pay.example.com", "pay-signed.json")
	if got := parse(t, e.get("/agents/"+noModes)).text("p.default-modes"); got != "The card declares no default input or output modes." {
		t.Errorf("default modes %q", got)
	}
	// A skill matched by its name shows the name once, marked.
	e.listed("hotel.example.com", "hotel.json")
	e.sync()
	d = parse(t, e.get("/?q=booking"))
	for _, li := range d.all("ul.matched li") {
		name := text(all(li, "span.skill-name")[0])
		if strings.Count(text(li), name) != 1 {
			t.Errorf("matched skill %q repeats its name: %q", name, text(li))
		}
	}
	if d.count("ul.matched li span.skill-name mark") == 0 {
		t.Errorf("no skill name is marked for q=booking: %q", d.text("ol.cards"))
	}
	if got := d.text("#sort option[selected]"); got != "Best match" {
		t.Errorf("order with a query is labelled %q", got)
	}
}

// Without a query the catalogue lists verified agents before unsigned
// ones, whatever changed last.
func TestCatalogueDefaultOrderPutsTrustFirst(t *testing.T) {
	e := newEnv(t)
	sig := []registry.SignatureResult{{Kid: "k1", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: "tp1"}}
	a := e.submit("geo.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustVerified, signatures: sig, thumbs: []string{"tp1"}})
	e.approve(a.ID)
	unsigned := e.listed("hotel.example.com", "hotel.json") // changed later
	e.recordError(unsigned, "connect", 0, "connection refused")
	e.sync()
	d := parse(t, e.get("/"))
	var order []string
	for _, li := range d.all("li.result") {
		id, _ := attr(li, "data-agent-id")
		order = append(order, id)
	}
	if strings.Join(order, ",") != a.ID+","+unsigned {
		t.Errorf("default order %v, want the verified agent %s first", order, a.ID)
	}
	// Sorting by "Recently updated" still puts the newest first.
	d = parse(t, e.get("/?sort=updated"))
	if id, _ := attr(d.all("li.result")[0], "data-agent-id"); id != unsigned {
		t.Errorf("sort=updated starts with %s", id)
	}
}

// The agent page shows the fetch health history: since when it fails,
// how many fetches failed in a row, the last success.
func TestAgentPageHealthHistory(t *testing.T) {
	e := newEnv(t)
	id := e.listed("hotel.example.com", "hotel.json")
	success := e.clk.Now()
	e.recordError(id, "connect", 0, "connection refused")
	since := e.clk.Now()
	e.recordError(id, "timeout", 0, "timed out")
	d := parse(t, e.get("/agents/"+id))
	if got := d.text("dd.consecutive-failures"); got != "2" {
		t.Errorf("failures in a row %q", got)
	}
	if got := d.text("dd.failing-since time"); got != since.UTC().Format("2006-01-02 15:04 UTC") {
		t.Errorf("failing since %q, want %s", got, since)
	}
	if got := d.text("dd.last-success time"); got != success.UTC().Format("2006-01-02 15:04 UTC") {
		t.Errorf("last success %q, want %s", got, success)
	}
	a, err := e.svc.Get(t.Context(), registry.Anonymous, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.ConsecutiveFailures != 2 || a.FailingSince == nil || !a.FailingSince.Equal(since) {
		t.Errorf("record: %d failures since %v", a.ConsecutiveFailures, a.FailingSince)
	}
}

// "Verified only" narrows the catalogue to verified agents and switches
// off again; the provider facet counts and filters by organization.
func TestVerifiedOnlyToggleAndProviderFacet(t *testing.T) {
	e := newEnv(t)
	sig := []registry.SignatureResult{{Kid: "k1", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: "tp1"}}
	a := e.submit("geo.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "geospatial.json"), trust: registry.TrustVerified, signatures: sig, thumbs: []string{"tp1"}})
	e.approve(a.ID)
	e.listed("hotel.example.com", "hotel.json")
	e.listed("currency.example.com", "currency.json")
	e.sync()
	d := parse(t, e.get("/?q=agent"))
	if got, _ := attr(d.one("#verified-only"), "aria-checked"); got != "false" {
		t.Errorf("toggle starts %q", got)
	}
	href, _ := attr(d.one("#verified-only"), "href")
	if href != "/?q=agent&trust=verified" {
		t.Fatalf("toggle links to %q", href)
	}
	d = parse(t, e.get(href))
	if got := resultIDs(d); len(got) != 1 || got[0] != a.ID {
		t.Errorf("verified only lists %v, want [%s]", got, a.ID)
	}
	if got, _ := attr(d.one("#verified-only"), "aria-checked"); got != "true" {
		t.Errorf("toggle after the click %q", got)
	}
	if off, _ := attr(d.one("#verified-only"), "href"); off != "/?q=agent" {
		t.Errorf("switching off links to %q", off)
	}
	// Providers: one link per organization, with its count.
	d = parse(t, e.get("/"))
	counts := facetCounts(d, "provider")
	if counts["Example Geo Services Inc."] != "1" || len(counts) < 2 {
		t.Errorf("provider facet %v", counts)
	}
	link := ""
	for _, l := range d.all(`section[data-facet=provider] a.facet-link`) {
		if v, _ := attr(l, "data-value"); v == "Example Geo Services Inc." {
			link, _ = attr(l, "href")
		}
	}
	if got := resultIDs(parse(t, e.get(link))); len(got) != 1 || got[0] != a.ID {
		t.Errorf("provider filter %q lists %v", link, got)
	}
}
