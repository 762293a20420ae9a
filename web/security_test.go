package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/web"
)

const wantCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func checkHeaders(t *testing.T, r response) {
	t.Helper()
	for h, want := range map[string]string{
		"Content-Security-Policy": wantCSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "same-origin",
		"X-Frame-Options":         "DENY",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s %s: %s = %q, want %q", r.Request.Method, r.Request.URL.Path, h, got, want)
		}
	}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(r.body, "<!doctype html>") && ct != "text/html; charset=utf-8" {
		t.Errorf("%s: Content-Type %q", r.Request.URL.Path, ct)
	}
}

// docs/threats.md H.76: the exact CSP, nosniff, frame-ancestors and
// Referrer-Policy on every HTML response, error pages included.
func TestH76SecurityHeadersOnEveryPage(t *testing.T) {
	e, ids := catalogueEnv(t)
	tok := e.adminToken()
	admin := e.asAdmin(tok)
	cases := []struct {
		method, path string
		hdr          map[string]string
		status       int
	}{
		{"GET", "/", nil, 200},
		{"GET", "/?q=maps&tag=maps", nil, 200},
		{"GET", "/agents/" + ids["geo"], nil, 200},
		{"GET", "/tags", nil, 200},
		{"GET", "/publish", nil, 200},
		{"GET", "/publish/" + ids["pending"], nil, 200},
		{"GET", "/admin", nil, 200},
		{"GET", "/admin", admin, 200},
		{"GET", "/admin/agents/" + ids["pending"], admin, 200},
		{"GET", "/admin/audit", admin, 200},
		{"GET", "/admin/tokens", admin, 200},
		{"GET", "/admin/tokens", nil, 401},
		{"GET", "/no/such/page", nil, 404},
		{"GET", "/agents/nope", nil, 404},
		{"GET", "/static/app.0000000000.css", nil, 404},
		{"DELETE", "/", nil, 405},
		{"GET", "/publish/x/y", nil, 404},
		{"PUT", "/publish", nil, 405},
		{"GET", "/admin/agents/" + ids["geo"] + "/act", admin, 405},
		{"POST", "/admin/agents/" + ids["geo"] + "/act", nil, 401},
		{"GET", "/?pageToken=nonsense", nil, 400},
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, nil, c.hdr)
		if r.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, r.StatusCode, c.status)
		}
		checkHeaders(t, r)
		if c.method != "HEAD" && !strings.HasPrefix(r.body, "<!doctype html>") {
			t.Errorf("%s %s: not an HTML page: %q", c.method, c.path, clip(r.body))
		}
	}
	if got := e.do("DELETE", "/", nil, nil).Header.Get("Allow"); got != "GET, HEAD" {
		t.Errorf("405 Allow %q", got)
	}
	// Static files: hashed names, cached forever, same headers.
	d := parse(t, e.get("/"))
	css, _ := attr(d.one(`link[rel=stylesheet]`), "href")
	js, _ := attr(d.one(`script[src]`), "src")
	for _, p := range []string{css, js} {
		if !strings.HasPrefix(p, "/static/app.") || len(p) < len("/static/app.0123456789.js") {
			t.Errorf("asset URL %q is not content-hashed", p)
		}
		r := e.get(p)
		wantStatus(t, r, 200)
		checkHeaders(t, r)
		if got := r.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s Cache-Control %q", p, got)
		}
	}
	// No inline script or style anywhere (the CSP would block it).
	for _, p := range []string{"/", "/agents/" + ids["geo"], "/admin"} {
		pd := parse(t, e.do("GET", p, nil, admin))
		for _, s := range pd.all("script") {
			if _, ok := attr(s, "src"); !ok {
				t.Errorf("%s has an inline script", p)
			}
		}
		if n := pd.count("style") + pd.count("[style]"); n != 0 {
			t.Errorf("%s has %d inline styles", p, n)
		}
	}
}

func TestH76HeadersOnInternalErrorPage(t *testing.T) {
	e := newEnv(t)
	id := e.submit("broken.example.com").ID
	e.svc.Store().Close() // every read now fails with an unexpected error
	r := e.get("/agents/" + id)
	wantStatus(t, r, 500)
	checkHeaders(t, r)
	if got := parse(t, r).text("h1"); got != "Something went wrong" {
		t.Errorf("500 page h1 %q", got)
	}
	if strings.Contains(r.body, "closed") {
		t.Error("the 500 page shows the internal error")
	}
}

// docs/threats.md I.77: cross-site POSTs are refused with 403 and change
// nothing; GETs to action URLs change nothing.
func TestI77CrossSiteActionsAreRefused(t *testing.T) {
	e := newEnv(t)
	a := e.submit("csrf.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "hotel.json")})
	tok := e.adminToken()
	form := url.Values{"action": {"approve"}, "versionSeq": {"1"}}
	for name, h := range map[string]map[string]string{
		"sec-fetch-site": {"Sec-Fetch-Site": "cross-site"},
		"foreign-origin": {"Origin": "https://evil.example"},
	} {
		hdr := e.asAdmin(tok)
		for k, v := range h {
			hdr[k] = v
		}
		for _, path := range []string{"/admin/agents/" + a.ID + "/act", "/publish", "/admin/tokens", "/admin/logout"} {
			r := e.do("POST", path, form, hdr)
			if r.StatusCode != 403 {
				t.Errorf("%s POST %s: status %d, want 403", name, path, r.StatusCode)
			}
			checkHeaders(t, r)
		}
	}
	// GET to the action URL: 405, nothing changes.
	r := e.do("GET", "/admin/agents/"+a.ID+"/act?action=approve&versionSeq=1", nil, e.asAdmin(tok))
	wantStatus(t, r, 405)
	got, err := e.svc.Get(context.Background(), adminP, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != registry.StatusPending {
		t.Fatalf("status %s after refused requests, want pending", got.Status)
	}
	entries, _, err := e.svc.Audit(context.Background(), adminP, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.AgentID == a.ID && en.Action != "submit" {
			t.Errorf("audit has %q after refused requests", en.Action)
		}
	}
	// The same-origin POST works.
	r = e.do("POST", "/admin/agents/"+a.ID+"/act", form, mergeHdr(e.asAdmin(tok), map[string]string{"Sec-Fetch-Site": "same-origin"}))
	wantStatus(t, r, 303)
}

func mergeHdr(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func TestNewChecksConfig(t *testing.T) {
	if _, err := web.New(web.Config{}); err == nil {
		t.Fatal("New without Service and Index succeeded")
	}
}
