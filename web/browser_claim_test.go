package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// newClaimEnv is the UI over a Service whose claims are fetched by the real
// crawler fetcher on loopback.
func newClaimEnv(t *testing.T) *env {
	t.Helper()
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	pol.Timeout = 5 * time.Second
	f, err := fetch.New(fetch.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return newEnvWith(t, func(c *registry.ServiceConfig) { c.ClaimFetcher = f })
}

// claimSite answers what the test sets, on 127.0.0.1.
type claimSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body string // "" answers 404
}

func newClaimSite(t *testing.T) *claimSite {
	s := &claimSite{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b := s.body
		s.mu.Unlock()
		if b == "" || !strings.HasPrefix(r.URL.Path, registry.ClaimPath) {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, b)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *claimSite) serve(b string) { s.mu.Lock(); s.body = b; s.mu.Unlock() }

// The publish page's claim flow in a browser: ask for a claim, see the URL
// to serve and the token, press Verify before serving (the failure is
// explained), serve the token, press Verify again and get the publisher
// token once; the claim page never shows it again.
func TestBrowserClaimFlow(t *testing.T) {
	e := newClaimEnv(t)
	site := newClaimSite(t)
	host := strings.TrimPrefix(site.srv.URL, "http://")
	ctx := tab(t)
	var claimURL, token, claimPage string
	run(t, ctx,
		chromedp.Navigate(e.srv.URL+"/publish"),
		chromedp.SendKeys("#claimHost", host, chromedp.ByID),
		chromedp.SetValue("#claimScheme", "http", chromedp.ByID),
		chromedp.Click("#claim-start", chromedp.ByID),
		chromedp.WaitVisible("#claim-challenge", chromedp.ByID),
		chromedp.Text("#claim-url", &claimURL, chromedp.ByID),
		chromedp.Text("#claim-token", &token, chromedp.ByID),
		chromedp.Location(&claimPage),
	)
	if len(token) != 43 || claimURL != "http://"+host+registry.ClaimPath+token {
		t.Fatalf("claim page shows url %q token %q", claimURL, token)
	}
	screenshot(t, ctx, "publish-claim.png")

	var failure string
	run(t, ctx,
		chromedp.Click("#claim-verify", chromedp.ByID),
		chromedp.WaitVisible("#claim-error", chromedp.ByID),
		chromedp.Text("#claim-error", &failure, chromedp.ByID),
	)
	if !strings.Contains(failure, "could not fetch") || !strings.Contains(failure, "http_status") {
		t.Errorf("failed verification says %q", failure)
	}

	site.serve(token + "\n")
	// Attempts of one claim are spaced (docs/claims.md): the owner tries
	// again once the interval has passed.
	e.clk.Advance(registry.DefaultClaimAttemptInterval)
	var pubToken, tokenID string
	run(t, ctx,
		chromedp.Click("#claim-verify", chromedp.ByID),
		chromedp.WaitVisible("#claim-verified", chromedp.ByID),
		chromedp.Text("#publisher-token", &pubToken, chromedp.ByID),
		chromedp.Text("#publisher-token-id", &tokenID, chromedp.ByID),
	)
	p, err := e.svc.Authenticate(context.Background(), pubToken)
	if err != nil || p.Role != registry.RolePublisher || p.TokenID != tokenID || !slices.Equal(p.Hosts, []string{"127.0.0.1"}) {
		t.Fatalf("the token shown authenticates as %+v, %v", p, err)
	}

	// Shown once: the claim page now says it was verified, without it.
	var html string
	run(t, ctx,
		chromedp.Navigate(claimPage),
		chromedp.WaitVisible("#claim-done", chromedp.ByID),
		chromedp.OuterHTML("html", &html, chromedp.ByQuery),
	)
	if strings.Contains(html, pubToken) || strings.Contains(html, "claim-verify") {
		t.Error("the verified claim page still offers the token or a verify button")
	}
}

// Without a browser: a bad host re-renders the form with the reason, an
// unknown claim is 404, GET on an action is 405, the claim page is never
// cached, and an expired claim offers no verify button.
func TestClaimPages(t *testing.T) {
	e := newClaimEnv(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.srv.URL)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := c.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := post("/claims", url.Values{"host": {"https://agent.example.com/x"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `id="claim-form-error"`) || !strings.Contains(body, "not a URL") {
		t.Errorf("bad host: %d %s", res.StatusCode, body)
	}
	res, _ = post("/claims", url.Values{"host": {"agent.example.com"}})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/claims/") {
		t.Fatalf("claim: %d %q", res.StatusCode, loc)
	}
	res, body = get(loc)
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" ||
		!strings.Contains(body, "https://agent.example.com"+registry.ClaimPath) || !strings.Contains(body, `id="claim-verify"`) {
		t.Errorf("claim page: %d %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	e.clk.Advance(time.Hour)
	if _, body = get(loc); !strings.Contains(body, `id="claim-expired"`) || strings.Contains(body, `id="claim-verify"`) {
		t.Error("an expired claim still offers Verify")
	}
	res, body = post(loc+"/verify", nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "expired") {
		t.Errorf("verify expired: %d", res.StatusCode)
	}
	if res, body = get("/claims/nope"); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "no host claim with this id") {
		t.Errorf("unknown claim: %d", res.StatusCode)
	}
	if res, _ = get(loc + "/verify"); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET verify: %d", res.StatusCode)
	}
	if res, _ = post("/claims/nope/verify", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("verify unknown: %d", res.StatusCode)
	}
}

// The review queue shows what the approval policy approved, naming the
// rule and the policy, with a link to the audit log of all of them.
func TestQueueShowsAutoApprovals(t *testing.T) {
	e := newEnvWith(t, func(c *registry.ServiceConfig) { c.AutoApprove = registry.AutoApproveVerified })
	tok := e.adminToken()
	r := e.do("GET", "/admin", nil, e.asAdmin(tok))
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, `id="auto-approved"`) {
		t.Fatal("the queue shows an auto-approval section with none made")
	}
	signed := e.submit("signed.example.com")
	plain := e.submit("plain.example.com")
	e.record(signed.ID, fetched{raw: readCard(t, "hotel.json"), trust: registry.TrustVerified})
	e.record(plain.ID, fetched{raw: readCard(t, "hotel.json")})
	r = e.do("GET", "/admin", nil, e.asAdmin(tok))
	wantStatus(t, r, http.StatusOK)
	if n := strings.Count(r.body, `class="auto-approved"`); n != 1 || !strings.Contains(r.body, "/admin/agents/"+signed.ID) ||
		!strings.Contains(r.body, "rule <code>verified</code> under policy <code>verified</code>") ||
		!strings.Contains(r.body, `href="/admin/audit?action=auto-approve"`) {
		t.Fatalf("%d auto-approvals shown:\n%s", n, clip(r.body))
	}
	r = e.do("GET", "/admin/audit?action=auto-approve", nil, e.asAdmin(tok))
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(r.body, signed.ID) || strings.Contains(r.body, plain.ID) {
		t.Errorf("the audit page filtered to auto-approve:\n%s", clip(r.body))
	}
}

// A server built without a claim fetcher says so on Verify (503), and the
// claim stays verifiable elsewhere: nothing was spent.
func TestClaimVerifyUnconfigured(t *testing.T) {
	e := newEnv(t)
	c, err := e.svc.CreateHostClaim(context.Background(), registry.ClaimRequest{Host: "agent.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/claims/"+c.ID+"/verify", url.Values{}, nil)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(r.body, "cannot verify host claims") {
		t.Errorf("body:\n%s", clip(r.body))
	}
}
