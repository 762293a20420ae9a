package web_test

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/identity/identitytest"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/web"
)

// oidcEnv is the UI with sign-in at a real OpenID Provider
// (identity/identitytest) on http://localhost:{port}, another site than
// the UI on 127.0.0.1, as a real provider is: the browser applies its
// cross-site cookie rules between them.
type oidcEnv struct {
	*env
	op       *identitytest.Provider
	internal string // an approved internal agent: readers see it, anonymous visitors do not
}

var oidcUsers = []identitytest.User{
	{ID: "u-ada", Username: "ada", Email: "ada@example.com", Groups: []string{"/cardex-admins"}},
	{ID: "u-pat", Username: "pat", Email: "pat@example.com", Groups: []string{"payments"}},
}

func newOIDCEnv(t *testing.T, opts ...envOption) *oidcEnv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	op := identitytest.Start(t, base+"/auth/oidc/callback", base+"/", oidcUsers...)
	idp, err := identity.New(identity.Config{Issuer: op.Issuer, Name: "Example SSO", ClientID: identitytest.ClientID,
		ClientSecret: identitytest.ClientSecret, BaseURL: base, AdminGroups: []string{"/cardex-admins"}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, ln, nil, append([]envOption{func(c *web.Config) { c.OIDC, c.BaseURL = idp, base }}, opts...)...)
	id := e.listed("internal.example.com", "currency.json")
	if _, err := e.svc.SetVisibility(context.Background(), adminP, id, registry.VisibilityInternal); err != nil {
		t.Fatal(err)
	}
	e.sync()
	return &oidcEnv{env: e, op: op, internal: id}
}

// client is a browser without JavaScript: it keeps cookies and follows
// no redirects.
func client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// begin posts the sign-in button and returns the provider URL it
// redirects to, checking the flow cookie it sets.
func (o *oidcEnv) begin(t *testing.T, c *http.Client) string {
	t.Helper()
	res, err := c.Get(o.srv.URL + "/auth/oidc/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, o.op.Issuer+"/auth?") {
		t.Fatalf("sign-in button: %d %q", res.StatusCode, loc)
	}
	var flow string
	for _, h := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(h, "cardex_oidc_flow=") {
			flow = h
		}
	}
	// SameSite=Lax (the provider's redirect back is cross-site), HttpOnly,
	// scoped to the callback, ten minutes; not Secure on an http base URL.
	for _, want := range []string{"Path=/auth/oidc/", "Max-Age=600", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(flow, want) {
			t.Errorf("flow cookie %q lacks %s", flow, want)
		}
	}
	if strings.Contains(flow, "Secure") {
		t.Errorf("flow cookie %q is Secure on an http base URL", flow)
	}
	q, _ := url.Parse(loc)
	for k, want := range map[string]string{"response_type": "code", "client_id": identitytest.ClientID,
		"redirect_uri": o.srv.URL + "/auth/oidc/callback", "scope": "openid profile email", "code_challenge_method": "S256"} {
		if got := q.Query().Get(k); got != want {
			t.Errorf("authorization request %s=%q, want %q", k, got, want)
		}
	}
	return loc
}

func (o *oidcEnv) getWith(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res.StatusCode, b.String()
}

// A callback is good once, only with the state the sign-in began with,
// and only in the browser that began it.
func TestOIDCCallbackRefusesTamperedStateReplayAndForeignBrowser(t *testing.T) {
	o := newOIDCEnv(t)
	const refused = "Signing in with Example SSO did not complete. Try again."

	// A tampered state: refused, no session, and the sign-in is spent.
	c := client()
	back := o.op.SignIn(t, c, o.begin(t, c), "pat")
	u, _ := url.Parse(back)
	q := u.Query()
	q.Set("state", q.Get("state")+"x")
	u.RawQuery = q.Encode()
	if code, body := o.getWith(t, c, u.String()); code != http.StatusUnauthorized || !strings.Contains(body, refused) {
		t.Errorf("tampered state: %d %.300s", code, body)
	}
	if code, _ := o.getWith(t, c, back); code != http.StatusUnauthorized {
		t.Errorf("the real callback after a tampered one: %d, want 401 (the sign-in is spent)", code)
	}

	// The real callback signs in once; replayed with the same cookie it
	// finds nothing.
	c = client()
	flowBegun := o.begin(t, c)
	back = o.op.SignIn(t, c, flowBegun, "pat")
	cb, _ := url.Parse(o.srv.URL)
	stolen := c.Jar.Cookies(&url.URL{Scheme: "http", Host: cb.Host, Path: "/auth/oidc/callback"})
	if code, body := o.getWith(t, c, back); code != http.StatusOK || !strings.Contains(body, `id="signed-in-as"`) ||
		!strings.Contains(body, `<meta http-equiv="refresh" content="0;url=/">`) {
		t.Fatalf("callback: %d %.500s", code, body)
	}
	replay := client()
	replay.Jar.SetCookies(&url.URL{Scheme: "http", Host: cb.Host, Path: "/auth/oidc/"}, stolen)
	if code, body := o.getWith(t, replay, back); code != http.StatusUnauthorized || !strings.Contains(body, refused) {
		t.Errorf("replayed callback: %d %.300s", code, body)
	}

	// A callback in a browser that never began a sign-in (a link planted
	// by someone else, login CSRF) has no flow cookie.
	c = client()
	back = o.op.SignIn(t, c, o.begin(t, c), "pat")
	if code, _ := o.getWith(t, client(), back); code != http.StatusUnauthorized {
		t.Errorf("callback without the flow cookie: %d", code)
	}
	// The person cancelled at the provider.
	c = client()
	loc, _ := url.Parse(o.begin(t, c))
	state := loc.Query().Get("state")
	if code, _ := o.getWith(t, c, o.srv.URL+"/auth/oidc/callback?error=access_denied&state="+url.QueryEscape(state)); code != http.StatusUnauthorized {
		t.Errorf("provider error: %d", code)
	}
}

// Roles come from groups at sign-in and stay for the session; a group
// the provider removes takes effect at the next sign-in.
func TestOIDCGroupRemovedTakesEffectAtNextSignIn(t *testing.T) {
	o := newOIDCEnv(t)
	signIn := func() *http.Client {
		c := client()
		back := o.op.SignIn(t, c, o.begin(t, c), "ada")
		if code, body := o.getWith(t, c, back); code != http.StatusOK || !strings.Contains(body, "Signed in as ada@example.com") {
			t.Fatalf("callback: %d %.300s", code, body)
		}
		return c
	}
	c := signIn()
	if code, body := o.getWith(t, c, o.srv.URL+"/admin"); code != http.StatusOK || !strings.Contains(body, `id="queue-total"`) {
		t.Fatalf("admin queue for an admin group member: %d", code)
	}
	o.op.SetGroups("u-ada", "payments")
	if code, _ := o.getWith(t, c, o.srv.URL+"/admin/audit"); code != http.StatusOK {
		t.Errorf("the running session changed role: %d", code)
	}
	c = signIn()
	if code, body := o.getWith(t, c, o.srv.URL+"/admin/audit"); code != http.StatusUnauthorized || !strings.Contains(body, `id="oidc-sign-in"`) ||
		!strings.Contains(body, "You are signed in as ada@example.com, who is not an administrator here.") {
		t.Errorf("after the group was removed: %d, want the sign-in page", code)
	}
	// Still signed in, as a reader: the internal agent is listed.
	if code, body := o.getWith(t, c, o.srv.URL+"/"); code != http.StatusOK || !strings.Contains(body, `data-agent-id="`+o.internal+`"`) {
		t.Errorf("reader catalogue: %d, internal agent listed %t", code, strings.Contains(body, o.internal))
	}
}

// A session never outlives --session-max-age, whatever the provider says.
func TestOIDCSessionEndsAtMaxAge(t *testing.T) {
	o := newOIDCEnv(t)
	c := client()
	back := o.op.SignIn(t, c, o.begin(t, c), "pat")
	if code, _ := o.getWith(t, c, back); code != http.StatusOK {
		t.Fatal(code)
	}
	for range 24 { // 12 h in 30-minute steps, touching the session so it never idles out
		if _, body := o.getWith(t, c, o.srv.URL+"/"); !strings.Contains(body, `id="signed-in"`) {
			t.Fatalf("signed out early at %s", o.clk.Now())
		}
		o.clk.Advance(29 * time.Minute)
	}
	o.clk.Advance(time.Hour)
	if _, body := o.getWith(t, c, o.srv.URL+"/"); strings.Contains(body, `id="signed-in"`) || strings.Contains(body, o.internal) {
		t.Error("the session outlived --session-max-age")
	}
}

// End to end in Chromium: the provider is another site (localhost vs
// 127.0.0.1), so this is the browser's real cookie behaviour. An admin
// signs in and the first page after the callback already has the
// session; signs out through the provider's end-session endpoint and
// lands back on the catalogue, signed out. A reader in payments sees the
// internal agent and no admin pages.
func TestOIDCSignInBrowser(t *testing.T) {
	ctx := tab(t)
	o := newOIDCEnv(t)
	login := func(user string) {
		run(t, ctx,
			chromedp.Navigate(o.srv.URL+"/admin"),
			chromedp.WaitVisible("#oidc-sign-in", chromedp.ByID),
			chromedp.Click("#oidc-sign-in", chromedp.ByID),
			chromedp.WaitVisible("#username", chromedp.ByID),
			chromedp.SendKeys("#username", user, chromedp.ByID),
			chromedp.SendKeys("#password", identitytest.Password, chromedp.ByID),
			chromedp.Click(`button[type="submit"]`, chromedp.ByQuery),
		)
	}
	var text, loc string
	var label string
	run(t, ctx, chromedp.Navigate(o.srv.URL+"/admin"), chromedp.Text("#oidc-sign-in", &label, chromedp.ByID))
	if label != "Sign in with Example SSO" {
		t.Errorf("button %q", label)
	}
	login("ada")
	run(t, ctx, chromedp.WaitVisible("#queue-total", chromedp.ByID), chromedp.Location(&loc), chromedp.Text("#signed-in", &text, chromedp.ByID))
	if loc != o.srv.URL+"/admin" || text != "ada@example.com" {
		t.Errorf("after sign-in: at %s as %q", loc, text)
	}
	run(t, ctx, chromedp.Click("#sign-out", chromedp.ByID), chromedp.WaitVisible("#results", chromedp.ByID), chromedp.Location(&loc))
	if loc != o.srv.URL+"/" {
		t.Errorf("after sign-out: at %s", loc)
	}
	var signedIn bool
	run(t, ctx, chromedp.Evaluate(`document.querySelector("#signed-in") !== null`, &signedIn))
	if signedIn {
		t.Error("still signed in after sign-out")
	}
	run(t, ctx, chromedp.Navigate(o.srv.URL+"/admin"), chromedp.WaitVisible("#oidc-sign-in", chromedp.ByID))

	login("pat")
	var internalListed bool
	run(t, ctx, chromedp.WaitVisible("#results", chromedp.ByID), chromedp.Location(&loc), chromedp.Text("#signed-in", &text, chromedp.ByID),
		chromedp.Evaluate(`document.querySelector('[data-agent-id="`+o.internal+`"]') !== null`, &internalListed))
	if loc != o.srv.URL+"/" || text != "pat@example.com" || !internalListed {
		t.Errorf("reader: at %s as %q, internal agent listed %t", loc, text, internalListed)
	}
	run(t, ctx, chromedp.Navigate(o.srv.URL+"/admin"), chromedp.WaitVisible("#oidc-sign-in", chromedp.ByID))
}

// A person's curation action in the UI is on the audit page under their
// email, with their subject, and the actor filter finds it by either.
func TestOIDCAuditPageNamesThePerson(t *testing.T) {
	o := newOIDCEnv(t)
	c := client()
	back := o.op.SignIn(t, c, o.begin(t, c), "ada")
	if code, _ := o.getWith(t, c, back); code != http.StatusOK {
		t.Fatal(code)
	}
	res, err := c.PostForm(o.srv.URL+"/admin/agents/"+o.internal+"/visibility", url.Values{"visibility": {"public"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("set visibility: %d", res.StatusCode)
	}
	for _, actor := range []string{"u-ada", "ada@example.com"} {
		code, body := o.getWith(t, c, o.srv.URL+"/admin/audit?actor="+url.QueryEscape(actor))
		if code != http.StatusOK || strings.Count(body, `class="audit-entry"`) != 1 ||
			!strings.Contains(body, `<a href="/admin/audit?actor=u-ada"><bdi>ada@example.com</bdi></a> <span class="muted subject" title="Subject at the identity provider"><bdi>u-ada</bdi></span>`) {
			t.Errorf("audit page actor=%s: %d %.2000s", actor, code, body[strings.Index(body, "<main"):])
		}
	}
}

// Signing in exempts an admin from the submission budget, nobody else: a
// reader the provider signed in spends the anonymous per-address budget,
// as a reader token does on the API.
func TestOIDCReaderSpendsTheSubmissionBudget(t *testing.T) {
	o := newOIDCEnv(t, func(c *web.Config) {
		c.Limits = ratelimit.Limits{SubmitPerAddress: ratelimit.Rate{N: 1, Per: time.Hour}, SubmitPerDomain: ratelimit.Rate{N: 10, Per: time.Hour}}
	})
	c := client()
	back := o.op.SignIn(t, c, o.begin(t, c), "pat")
	if code, _ := o.getWith(t, c, back); code != http.StatusOK {
		t.Fatal(code)
	}
	for i, want := range []int{http.StatusSeeOther, http.StatusTooManyRequests} {
		res, err := c.PostForm(o.srv.URL+"/publish", url.Values{"cardUrl": {"https://agent" + strconv.Itoa(i) + ".example.com/.well-known/agent-card.json"}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("submission %d by a signed-in reader: %d, want %d", i+1, res.StatusCode, want)
		}
	}
}

// Behind https the flow cookie is Secure too.
func TestOIDCFlowCookieSecureOnHTTPS(t *testing.T) {
	op := identitytest.Start(t, "https://cardex.example.com/auth/oidc/callback", "https://cardex.example.com/")
	idp, err := identity.New(identity.Config{Issuer: op.Issuer, ClientID: identitytest.ClientID, BaseURL: "https://cardex.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *web.Config) { c.OIDC, c.BaseURL = idp, "https://cardex.example.com" })
	res, err := client().Get(e.srv.URL + "/auth/oidc/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Set-Cookie"); res.StatusCode != http.StatusSeeOther ||
		!strings.Contains(got, "; Secure") || !strings.Contains(got, "SameSite=Lax") || !strings.Contains(got, "HttpOnly") {
		t.Errorf("%d %q", res.StatusCode, got)
	}
	if loc := res.Header.Get("Location"); !strings.Contains(loc, "redirect_uri="+url.QueryEscape("https://cardex.example.com/auth/oidc/callback")) {
		t.Errorf("redirect_uri in %q", loc)
	}
}

// Sign-out ends the session here and moves on to the provider's
// end-session endpoint with the client id, the sign-in's ID token as
// id_token_hint and {base-url}/ to come back to, which the provider
// accepts.
func TestOIDCSignOutEndsProviderSession(t *testing.T) {
	o := newOIDCEnv(t)
	c := client()
	back := o.op.SignIn(t, c, o.begin(t, c), "pat")
	if code, _ := o.getWith(t, c, back); code != http.StatusOK {
		t.Fatal(code)
	}
	res, err := c.PostForm(o.srv.URL+"/admin/logout", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	res.Body.Close()
	body := b.String()
	start := strings.Index(body, `<a href="`+o.op.Issuer+`/end_session?`)
	if res.StatusCode != http.StatusOK || start < 0 {
		t.Fatalf("sign-out: %d %.1500s", res.StatusCode, body)
	}
	raw := body[start+len(`<a href="`):]
	raw = strings.ReplaceAll(raw[:strings.Index(raw, `"`)], "&amp;", "&")
	u, _ := url.Parse(raw)
	q := u.Query()
	if q.Get("client_id") != identitytest.ClientID || q.Get("post_logout_redirect_uri") != o.srv.URL+"/" || !identity.LooksLikeJWT(q.Get("id_token_hint")) {
		t.Errorf("end-session request %v", q)
	}
	if _, body := o.getWith(t, c, o.srv.URL+"/"); strings.Contains(body, `id="signed-in"`) {
		t.Error("still signed in at Cardex")
	}
	res, err = c.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound || loc != o.srv.URL+"/" {
		t.Errorf("the provider's end-session: %d to %q", res.StatusCode, loc)
	}
}
