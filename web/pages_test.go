package web_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/web"
)

func TestTagsPage(t *testing.T) {
	e, _ := catalogueEnv(t)
	d := parse(t, e.get("/tags"))
	tags := map[string]string{}
	for _, a := range d.all("ul.tag-cloud li.tag a") {
		href, _ := attr(a, "href")
		tags[text(all(a, "bdi")[0])+" "+text(all(a, "span.count")[0])] = href
	}
	if tags["maps 1"] != "/?tag=maps" || tags["currency 1"] != "/?tag=currency" {
		t.Errorf("tags %v", tags)
	}
	// The pending agent's tags do not leak (docs/api.md "Curation and visibility").
	for k := range tags {
		if strings.HasPrefix(k, "café") {
			t.Errorf("tag %q of a pending agent is listed", k)
		}
	}
	d = parse(t, e.get("/tags?prefix=ma"))
	for _, li := range texts(d.all("li.tag")) {
		if !strings.HasPrefix(li, "ma") {
			t.Errorf("prefix=ma lists %q", li)
		}
	}
}

func TestPublishFlow(t *testing.T) {
	e := newEnv(t)
	d := parse(t, e.get("/publish"))
	if got, _ := attr(d.one(`form[action="/publish"]`), "method"); got != "post" {
		t.Fatalf("publish form method %q", got)
	}
	d.one(`label[for=cardUrl]`)

	r := e.do("POST", "/publish", url.Values{"cardUrl": {"https://new.example.com"}}, nil)
	wantStatus(t, r, 303)
	loc := r.Header.Get("Location")
	if !strings.HasPrefix(loc, "/publish/") || e.kicks != 1 {
		t.Fatalf("redirect to %q, kicks %d", loc, e.kicks)
	}
	id := strings.TrimPrefix(loc, "/publish/")
	d = parse(t, e.get(loc))
	if got := d.text("#publish-status dd.fetch-state"); got != "waiting for the crawler…" {
		t.Errorf("before the first fetch: %q", got)
	}
	if v, _ := attr(d.one("#publish-status"), "data-refresh"); v != "3" {
		t.Errorf("data-refresh %q while waiting", v)
	}
	d.one(`#publish-status a.refresh[href="` + loc + `"]`)
	// The agent page of a never-fetched agent renders what is known.
	d = parse(t, e.get("/agents/"+id))
	if got := d.text("h1"); got != "new.example.com" {
		t.Errorf("h1 of an unfetched agent %q", got)
	}
	if got := d.text("#signatures p.muted"); got != "Not fetched yet." {
		t.Errorf("signatures of an unfetched agent %q", got)
	}
	if got := d.text("#history p.muted"); got != "No version has been fetched yet." {
		t.Errorf("history of an unfetched agent %q", got)
	}

	e.record(id, fetched{raw: readCard(t, "currency.json")})
	d = parse(t, e.get(loc))
	if _, ok := attr(d.one("#publish-status"), "data-refresh"); ok {
		t.Error("still refreshing after the first fetch")
	}
	if got := d.text("#publish-status dd.fetch-state"); !strings.HasPrefix(got, "done") {
		t.Errorf("after the first fetch: %q", got)
	}
	if d.count("#publish-status li.problem") == 0 {
		t.Error("the first fetch's problems are not shown")
	}

	// Duplicate, invalid and reserved URLs come back to the form.
	r = e.do("POST", "/publish", url.Values{"cardUrl": {"https://NEW.example.com/"}}, nil)
	wantStatus(t, r, 409)
	d = parse(t, r)
	if href, _ := attr(d.one("#publish-error a"), "href"); href != loc {
		t.Errorf("duplicate links to %q", href)
	}
	for _, bad := range []string{"ftp://x.example.com", "https://user:pw@x.example.com", "https://10.0.0.1/", "not a url"} {
		r = e.do("POST", "/publish", url.Values{"cardUrl": {bad}}, nil)
		wantStatus(t, r, 400)
		d = parse(t, r)
		if !strings.HasPrefix(d.text("#publish-error"), "This is not a card URL Cardex can fetch") {
			t.Errorf("%q: %q", bad, d.text("#publish-error"))
		}
		if v, _ := attr(d.one("input#cardUrl"), "value"); v != bad {
			t.Errorf("the form lost the input %q", bad)
		}
	}
}

func TestPublishIsRateLimitedPerAddress(t *testing.T) {
	e := newEnv(t, func(c *web.Config) { c.Limits.SubmitPerAddress = ratelimit.Rate{N: 2, Per: time.Minute} })
	for i, want := range []int{303, 303, 429} {
		r := e.do("POST", "/publish", url.Values{"cardUrl": {"https://r" + string(rune('a'+i)) + ".example.com"}}, nil)
		wantStatus(t, r, want)
	}
	r := e.do("POST", "/publish", url.Values{"cardUrl": {"https://rz.example.com"}}, nil)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// An admin session is not limited.
	tok := e.adminToken()
	wantStatus(t, e.do("POST", "/publish", url.Values{"cardUrl": {"https://ry.example.com"}}, e.asAdmin(tok)), 303)
	page, err := e.svc.List(t.Context(), adminP, registry.ListQuery{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalSize != 3 {
		t.Errorf("%d agents registered, want 3", page.TotalSize)
	}
}

func TestDemoBanner(t *testing.T) {
	e := newEnv(t, func(c *web.Config) { c.Demo = true })
	for _, p := range []string{"/", "/tags", "/publish", "/nope"} {
		if got := parse(t, e.get(p)).text("div.demo"); !strings.HasPrefix(got, "Demo catalogue") {
			t.Errorf("%s: demo banner %q", p, got)
		}
	}
	plain := newEnv(t)
	if n := parse(t, plain.get("/")).count("div.demo"); n != 0 {
		t.Error("a banner without Demo")
	}
	if _, err := web.New(web.Config{Service: e.svc, Index: e.idx, BaseURL: "https://cardex.example.com/x"}); err != nil {
		t.Errorf("New with a base URL: %v", err)
	}
}

func TestPublishIsRateLimitedPerDomain(t *testing.T) {
	e := newEnv(t, func(c *web.Config) { c.Limits.SubmitPerDomain = ratelimit.Rate{N: 2, Per: time.Hour} })
	for i, want := range []int{303, 303, 429} {
		r := e.do("POST", "/publish", url.Values{"cardUrl": {"https://a" + strconv.Itoa(i) + ".victim.co.uk"}}, nil)
		wantStatus(t, r, want)
	}
	// A bare host is the same domain: the form does not skip the limit
	// when "https://" is left out.
	wantStatus(t, e.do("POST", "/publish", url.Values{"cardUrl": {"b.victim.co.uk"}}, nil), 429)
	bare := newEnv(t, func(c *web.Config) { c.Limits.SubmitPerDomain = ratelimit.Rate{N: 2, Per: time.Hour} })
	for i, want := range []int{303, 303, 429} {
		wantStatus(t, bare.do("POST", "/publish", url.Values{"cardUrl": {"c" + strconv.Itoa(i) + ".victim.co.uk"}}, nil), want)
	}
	// Another registrable domain is not affected.
	wantStatus(t, e.do("POST", "/publish", url.Values{"cardUrl": {"https://a.other.co.uk"}}, nil), 303)
}

// Anonymous page reads take the API's read limit: a flood of distinct
// searches from one address gets 429 once the bucket is spent, on the
// catalogue, the tags and the agent pages alike; static files and a
// signed-in admin are not limited.
func TestPageReadsAreRateLimited(t *testing.T) {
	e := newEnv(t, func(c *web.Config) { c.Limits.ReadPerAddress = ratelimit.Rate{N: 4, Per: time.Second, Burst: 4} })
	id := e.listed("limited.example.com", "geospatial.json")
	e.sync()
	css, _ := attr(parse(t, e.get("/?q=a")).one(`link[rel=stylesheet]`), "href")
	for _, p := range []string{"/?q=b", "/tags", "/agents/" + id} {
		wantStatus(t, e.get(p), 200)
	}
	for _, p := range []string{"/?q=c", "/tags", "/agents/" + id, "/publish"} {
		r := e.get(p)
		wantStatus(t, r, 429)
		if got := r.Header.Get("Retry-After"); got != "1" {
			t.Errorf("%s: Retry-After %q, want 1", p, got)
		}
	}
	wantStatus(t, e.get(css), 200)
	wantStatus(t, e.do("GET", "/?q=d", nil, e.asAdmin(e.adminToken())), 200)
}

// During shutdown the index is closed: pages answer 503 with Retry-After,
// as the API does, not 500 (both read the problems table).
func TestPagesDuringShutdownAre503(t *testing.T) {
	e := newEnv(t)
	if err := e.idx.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/?q=weather", "/tags"} {
		r := e.get(p)
		wantStatus(t, r, 503)
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", p)
		}
		if got := parse(t, r).text("h1"); got != "Shutting down" {
			t.Errorf("%s: heading %q", p, got)
		}
	}
}
