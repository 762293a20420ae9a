package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/web"
)

func TestAdminLogin(t *testing.T) {
	e := newEnv(t, func(c *web.Config) { c.Limits.AuthFailures = ratelimit.Rate{N: 3, Per: time.Minute} })
	d := parse(t, e.get("/admin"))
	d.one(`form[action="/admin/login"] input#token[type=password]`)

	tok := e.adminToken()
	r := e.do("POST", "/admin/login", url.Values{"token": {tok}}, nil)
	wantStatus(t, r, 303)
	var c string
	for _, sc := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(sc, "__Host-cardex_session=") {
			c = sc
		}
	}
	for _, want := range []string{"__Host-cardex_session=", "Path=/", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(c, want) {
			t.Errorf("session cookie %q lacks %q", c, want)
		}
	}
	// The cookie holds a session secret, never the API token.
	if strings.Contains(c, tok) || strings.Contains(c, "cdx_") {
		t.Errorf("the session cookie carries the token: %q", c)
	}
	if strings.Contains(c, "Domain=") {
		t.Errorf("a __Host- cookie with a Domain: %q", c)
	}
	session := map[string]string{"Cookie": strings.SplitN(c, ";", 2)[0]}
	// Signed in: the queue.
	d = parse(t, e.do("GET", "/admin", nil, session))
	if got := d.text("h1"); got != "Review queue" {
		t.Errorf("signed-in /admin h1 %q", got)
	}
	// Logout clears the cookie and ends the session on the server: a kept
	// copy of the cookie opens nothing.
	r = e.do("POST", "/admin/logout", nil, session)
	wantStatus(t, r, 303)
	if sc := r.Header.Get("Set-Cookie"); !strings.Contains(sc, "Max-Age=0") {
		t.Errorf("logout cookie %q", sc)
	}
	parse(t, e.do("GET", "/admin", nil, session)).one(`form[action="/admin/login"]`)
	// The raw token in the cookie is no session either.
	parse(t, e.do("GET", "/admin", nil, map[string]string{"Cookie": "__Host-cardex_session=" + tok})).one(`form[action="/admin/login"]`)

	// docs/threats.md I.78: a reader token, a garbage token and a revoked
	// token all get the same generic 401; then further failures from the
	// address are limited, but the valid admin token still signs in (a
	// guessing run must not lock the admin out).
	reader, _, err := e.svc.CreateToken(t.Context(), registry.TokenRequest{Role: registry.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{reader, "cdx_0123456789abcdef_" + strings.Repeat("A", 43), "x"} {
		r = e.do("POST", "/admin/login", url.Values{"token": {bad}}, nil)
		wantStatus(t, r, 401)
		if got := parse(t, r).text("#login-error"); got != "That is not a valid admin token." {
			t.Errorf("login error %q", got)
		}
		if len(r.Header.Values("Set-Cookie")) != 0 {
			t.Error("a failed login set a cookie")
		}
	}
	r = e.do("POST", "/admin/login", url.Values{"token": {"cdx_guess"}}, nil)
	wantStatus(t, r, 429)
	if got := r.Header.Get("Retry-After"); got != "20" {
		t.Errorf("Retry-After %q, want 20", got)
	}
	wantStatus(t, e.do("POST", "/admin/login", url.Values{"token": {tok}}, nil), 303)
	wantStatus(t, e.do("POST", "/admin/login", url.Values{"token": {"x"}}, nil), 429)
	// A non-admin token neither signs in nor makes a session.
	d = parse(t, e.do("GET", "/admin/tokens", nil, map[string]string{"Cookie": "__Host-cardex_session=" + reader}))
	d.one(`form[action="/admin/login"]`)
}

// flaggedAgent is approved at a verified version 1, then fetched unsigned
// at version 2: a trust regression flags it (docs/api.md "Curation and visibility").
func flaggedAgent(e *env, host string) string {
	a := e.submit(host)
	sig := []registry.SignatureResult{{Kid: "k1", Alg: "ES256", KeySource: "well-known", Profile: "spec", Status: "verified", Thumbprint: "tp1"}}
	e.record(a.ID, fetched{raw: readCard(e.t, "hotel.json"), trust: registry.TrustVerified, signatures: sig, thumbs: []string{"tp1"}})
	e.approve(a.ID)
	var card map[string]any
	json.Unmarshal(readCard(e.t, "hotel.json"), &card)
	card["description"] = "Now unsigned."
	raw, _ := json.Marshal(card)
	e.record(a.ID, fetched{raw: raw})
	return a.ID
}

func TestAdminQueueAndReview(t *testing.T) {
	e := newEnv(t)
	pending := e.submit("pending.example.com")
	e.record(pending.ID, fetched{raw: readCard(t, "toolroute.json")})
	flagged := flaggedAgent(e, "flagged.example.com")
	failing := e.listed("failing.example.com", "currency.json")
	e.recordError(failing, "timeout", 0, "no answer in 10s")
	tok := e.adminToken()

	// Each tab lists its own agents, and every tab shows its count.
	for view, id := range map[string]string{"pending": pending.ID, "flagged": flagged, "failing": failing} {
		d := parse(t, e.do("GET", "/admin?view="+view, nil, e.asAdmin(tok)))
		if got := resultRowIDs(d); len(got) != 1 || got[0] != id {
			t.Errorf("queue %s lists %v, want [%s]", view, got, id)
		}
		if got := d.text(`a[data-view=` + view + `] .count`); got != "1" {
			t.Errorf("tab %s count %q", view, got)
		}
	}
	// Pending is the default tab.
	if got := resultRowIDs(parse(t, e.do("GET", "/admin", nil, e.asAdmin(tok)))); len(got) != 1 || got[0] != pending.ID {
		t.Errorf("default queue %v", got)
	}

	// The re-review shows the candidate, the diff since the approved
	// version, and binds approve to the candidate.
	r := e.do("GET", "/admin/agents/"+flagged, nil, e.asAdmin(tok))
	wantStatus(t, r, 200)
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("admin page Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	d := parse(t, r)
	if got := texts(d.all("#decide li.change")); len(got) != 1 || !strings.HasPrefix(got[0], "Description changed /description") || !strings.HasSuffix(got[0], "→ Now unsigned.") {
		t.Errorf("diff since approved %q", got)
	}
	if v, _ := attr(d.one(`form.action-approve input[name=versionSeq]`), "value"); v != "2" {
		t.Errorf("approve is bound to version %q, want 2", v)
	}
	if got := texts(d.all("#decide form.action button")); strings.Join(got, ",") != "accept this version,decline this version,suspend,remove" {
		t.Errorf("actions %v", got)
	}
	if v, _ := attr(d.one(`form.action-reject input[name=versionSeq]`), "value"); v != "2" {
		t.Errorf("decline is bound to version %q, want 2", v)
	}
	if got := d.text("header.agent-head p.meta"); !strings.Contains(got, "needs review") {
		t.Errorf("review header %q does not say the agent needs review", got)
	}
	// The candidate's own verdict: it lost its signature.
	if got := d.text("#decide"); !strings.Contains(got, "Signatures of the candidate The candidate is not signed.") {
		t.Errorf("decision panel %q", got)
	}
	if n := d.count("#decide li.problem"); n == 0 {
		t.Error("the candidate's problems are not shown")
	}
	// The current (approved) version's verified signature stays in the panel.
	if got := d.text("#signatures tr.signature"); !strings.HasPrefix(got, "0 k1 ES256 the origin's /.well-known/jwks.json") {
		t.Errorf("current signature row %q", got)
	}
}

func TestAdminActions(t *testing.T) {
	e := newEnv(t)
	a := e.submit("act.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "hotel.json")})
	tok := e.adminToken()
	post := func(path string, form url.Values) response {
		return e.do("POST", path, form, e.asAdmin(tok))
	}
	act := "/admin/agents/" + a.ID + "/act"

	// Nothing to approve before the first fetch.
	empty := e.submit("empty.example.com")
	r0 := post("/admin/agents/"+empty.ID+"/act", url.Values{"action": {"approve"}, "versionSeq": {"0"}})
	wantStatus(t, r0, 409)
	if got := parse(t, r0).text("#action-error"); got != "Nothing has been fetched yet: there is no version to approve." {
		t.Errorf("approve before the first fetch: %q", got)
	}
	// F.65: a newer version arrived after the page was opened.
	e.record(a.ID, fetched{raw: readCard(t, "currency.json")})
	r := post(act, url.Values{"action": {"approve"}, "versionSeq": {"1"}, "reason": {"looks fine"}})
	wantStatus(t, r, 409)
	if got := parse(t, r).text("#action-error"); !strings.Contains(got, "version 2 is now the one under review") {
		t.Errorf("conflict message %q", got)
	}
	if got, _ := e.svc.Get(t.Context(), adminP, a.ID); got.Status != registry.StatusPending {
		t.Fatalf("a stale approve changed the status to %s", got.Status)
	}
	// Approving what is current works and is audited with the reason.
	r = post(act, url.Values{"action": {"approve"}, "versionSeq": {"2"}, "reason": {"looks fine"}})
	wantStatus(t, r, 303)
	if loc := r.Header.Get("Location"); loc != "/admin/agents/"+a.ID+"?done=approve" {
		t.Errorf("redirect %q", loc)
	}
	if got := parse(t, e.do("GET", "/admin/agents/"+a.ID+"?done=approve", nil, e.asAdmin(tok))).text("#done"); got != "Approved." {
		t.Errorf("done %q", got)
	}
	for _, step := range []struct {
		action string
		status registry.Status
		code   int
	}{
		{"suspend", registry.StatusSuspended, 303},
		{"reject", registry.StatusSuspended, 409}, // not from suspended
		{"restore", registry.StatusApproved, 303},
		{"remove", registry.StatusRemoved, 303},
		{"bogus", registry.StatusRemoved, 400},
	} {
		r := post(act, url.Values{"action": {step.action}, "reason": {"step " + step.action}})
		wantStatus(t, r, step.code)
		got, _ := e.svc.Get(t.Context(), adminP, a.ID)
		if got.Status != step.status {
			t.Fatalf("after %s: status %s, want %s", step.action, got.Status, step.status)
		}
	}
	d := parse(t, e.do("GET", "/admin/audit", nil, e.asAdmin(tok)))
	var actions []string
	for _, row := range d.all("tr.audit-entry") {
		cells := all(row, "td")
		actions = append(actions, text(cells[2])+":"+text(cells[4]))
	}
	slices.Reverse(actions) // the page is newest first
	want := "submit:,submit:,approve:looks fine,suspend:step suspend,restore:step restore,remove:step remove"
	if got := strings.Join(append(actions[:1:1], actions[2:]...), ","); got != want { // [1] is the token creation
		t.Errorf("audit %q\nwant %q", got, want)
	}

	// Keys: a bad JWKS is explained, a good one pinned and audited.
	b := e.submit("keys.example.com")
	r = post("/admin/agents/"+b.ID+"/keys", url.Values{"jwks": {`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`}})
	wantStatus(t, r, 400)
	if got := parse(t, r).text("#action-error"); !strings.HasPrefix(got, "The key set was not pinned: kty must be EC, RSA or OKP") {
		t.Errorf("bad JWKS message %q", got)
	}
	jwks := `{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`
	wantStatus(t, post("/admin/agents/"+b.ID+"/keys", url.Values{"jwks": {jwks}}), 303)
	wantStatus(t, post("/admin/agents/"+b.ID+"/crawl", nil), 303)
	wantStatus(t, post("/admin/agents/"+b.ID+"/visibility", url.Values{"visibility": {"internal"}}), 303)
	got, _ := e.svc.Get(t.Context(), adminP, b.ID)
	if got.Visibility != registry.VisibilityInternal {
		t.Errorf("visibility %s", got.Visibility)
	}
	wantStatus(t, post("/admin/agents/"+b.ID+"/unpin", nil), 303)
	es, _, _ := e.svc.Audit(t.Context(), adminP, 0, 100)
	var kinds []string
	for _, en := range es {
		if en.AgentID == b.ID {
			kinds = append(kinds, en.Action)
		}
	}
	if strings.Join(kinds, ",") != "submit,pin-keys,crawl,set-visibility,unpin-keys" {
		t.Errorf("audit for keys agent %v", kinds)
	}
}

func TestAdminTokens(t *testing.T) {
	e := newEnv(t)
	tok := e.adminToken()
	r := e.do("POST", "/admin/tokens", url.Values{"role": {"publisher"}, "name": {"acme-pub"}, "hosts": {"acme.example.com, api.acme.example.com"}, "expiresDays": {"30"}}, e.asAdmin(tok))
	wantStatus(t, r, 201)
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the page with a secret has Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	d := parse(t, r)
	secret := d.text("#secret")
	p, err := e.svc.Authenticate(t.Context(), secret)
	if err != nil || p.Role != registry.RolePublisher || strings.Join(p.Hosts, ",") != "acme.example.com,api.acme.example.com" {
		t.Fatalf("the shown secret authenticates as %+v, %v", p, err)
	}
	// Listed without the secret.
	d = parse(t, e.do("GET", "/admin/tokens", nil, e.asAdmin(tok)))
	if strings.Contains(d.text("table.tokens"), secret) || d.count("#secret") != 0 {
		t.Fatal("the token list shows the secret again")
	}
	row := d.one(`tr.token[data-token-id=` + p.TokenID + `]`)
	if got := text(row); !strings.HasPrefix(got, "acme-pub "+p.TokenID+" publisher acme.example.com, api.acme.example.com") {
		t.Errorf("token row %q", got)
	}
	// Bad requests are explained.
	r = e.do("POST", "/admin/tokens", url.Values{"role": {"publisher"}}, e.asAdmin(tok))
	wantStatus(t, r, 400)
	if got := parse(t, r).text("#token-error"); got != "The token was not created: a publisher token needs at least one host." {
		t.Errorf("error %q", got)
	}
	wantStatus(t, e.do("POST", "/admin/tokens", url.Values{"role": {"reader"}, "expiresDays": {"-3"}}, e.asAdmin(tok)), 400)
	// Revoke.
	wantStatus(t, e.do("POST", "/admin/tokens/"+p.TokenID+"/revoke", nil, e.asAdmin(tok)), 303)
	if _, err := e.svc.Authenticate(t.Context(), secret); err == nil {
		t.Error("a revoked token still authenticates")
	}
	d = parse(t, e.do("GET", "/admin/tokens?done=revoke", nil, e.asAdmin(tok)))
	if !strings.Contains(text(d.one(`tr.token[data-token-id=`+p.TokenID+`]`)), "revoked") {
		t.Error("the revoked token is not shown as revoked")
	}
	// Revoking your own token ends your session.
	self, _ := e.svc.Authenticate(t.Context(), tok)
	session := e.asAdmin(tok)
	wantStatus(t, e.do("POST", "/admin/tokens/"+self.TokenID+"/revoke", nil, session), 303)
	wantStatus(t, e.do("GET", "/admin/tokens", nil, session), 401)
}

// The audit log reads newest first, 50 to a page, every entry once.
func TestAdminAuditPaging(t *testing.T) {
	e := newEnv(t)
	for i := range 105 {
		e.submit("a" + strconv.Itoa(i) + ".example.com")
	}
	tok := e.adminToken() // entry 106
	var seqs []int
	next, pages := "/admin/audit", 0
	for next != "" && pages < 5 {
		d := parse(t, e.do("GET", next, nil, e.asAdmin(tok)))
		for _, tr := range d.all("tr.audit-entry") {
			v, _ := attr(tr, "data-seq")
			n, _ := strconv.Atoi(v)
			seqs = append(seqs, n)
		}
		next = ""
		if ns := d.all(`a[rel=next]`); len(ns) == 1 {
			next, _ = attr(ns[0], "href")
		}
		pages++
	}
	if pages != 3 || len(seqs) != 106 || seqs[0] != 106 || seqs[105] != 1 || !slices.IsSortedFunc(seqs, func(a, b int) int { return b - a }) {
		t.Errorf("%d pages, %d entries from %v to %v", pages, len(seqs), seqs[:1], seqs[len(seqs)-1:])
	}
	wantStatus(t, e.do("GET", "/admin/audit?before=x", nil, e.asAdmin(tok)), 400)
	wantStatus(t, e.do("GET", "/admin/audit?action=frobnicate", nil, e.asAdmin(tok)), 400)
}

// Filtered by agent, actor and action; agents by name, details in words.
func TestAdminAuditFiltersAndReadableDetail(t *testing.T) {
	e := newEnv(t)
	id := e.listed("geo.example.com", "geospatial.json") // submit + approve (as test-admin)
	other := e.submit("other.example.com")
	tok := e.adminToken()
	if _, err := e.svc.Act(t.Context(), adminP, id, registry.ActionSuspend, registry.ActionRequest{Reason: "checking"}); err != nil {
		t.Fatal(err)
	}
	d := parse(t, e.do("GET", "/admin/audit?agent="+id, nil, e.asAdmin(tok)))
	var got []string
	for _, tr := range d.all("tr.audit-entry") {
		got = append(got, text(all(tr, "td.action")[0])+" | "+text(all(tr, "td.detail")[0]))
	}
	want := []string{"suspend | approved → suspended", "approve | pending → approved; version 1",
		"submit | card URL https://geo.example.com/.well-known/agent-card.json; public"}
	if !slices.Equal(got, want) {
		t.Errorf("agent entries %q, want %q", got, want)
	}
	if got := d.text("tr.audit-entry td.agent a"); got != "GeoSpatial Route Planner Agent" {
		t.Errorf("agent named %q", got)
	}
	if got := d.text("#audit-agent"); !strings.Contains(got, "GeoSpatial Route Planner Agent") {
		t.Errorf("filter heading %q", got)
	}
	d = parse(t, e.do("GET", "/admin/audit?action=submit", nil, e.asAdmin(tok)))
	if n := d.count("tr.audit-entry"); n != 2 {
		t.Errorf("%d submit entries, want 2", n)
	}
	if got := d.text("tr.audit-entry td.agent a"); got != "other.example.com" {
		t.Errorf("a never-fetched agent is named %q, want its host (%s)", got, other.ID)
	}
	d = parse(t, e.do("GET", "/admin/audit?actor=test-admin", nil, e.asAdmin(tok)))
	if n := d.count("tr.audit-entry"); n != 2 {
		t.Errorf("%d entries by test-admin, want 2", n)
	}
	d = parse(t, e.do("GET", "/admin/audit?actor=cli&action=token-create", nil, e.asAdmin(tok)))
	if got := d.text("tr.audit-entry td.detail"); got != "token “ui-admin”, role admin" {
		t.Errorf("token detail %q", got)
	}
}

// Signing in over plain HTTP to a host that is not loopback would fail
// silently (the browser drops the Secure cookie): the page says so. On
// loopback, over TLS or behind a trusted TLS proxy it does not.
func TestAdminLoginWarnsOnPlainHTTP(t *testing.T) {
	e := newEnv(t)
	if n := parse(t, e.get("/admin")).count("#plain-http"); n != 0 {
		t.Error("a plain-HTTP warning on loopback")
	}
	req, err := http.NewRequest("GET", e.srv.URL+"/admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "cardex.example.com"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(b), `id="plain-http"`) {
		t.Error("no warning for a plain-HTTP sign-in page on a public host name")
	}
	behind := newEnv(t, func(c *web.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	req, _ = http.NewRequest("GET", behind.srv.URL+"/admin", nil)
	req.Host = "cardex.example.com"
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ = io.ReadAll(res.Body)
	if strings.Contains(string(b), `id="plain-http"`) {
		t.Error("a warning behind a trusted TLS proxy")
	}
}

// A curator declines a flagged candidate from the review page: the agent
// stays approved on its last verified version, the flag clears, and the
// page and audit log say so.
func TestAdminDeclinesFlaggedCandidate(t *testing.T) {
	e := newEnv(t)
	flagged := flaggedAgent(e, "flagged.example.com")
	tok := e.adminToken()
	r := e.do("POST", "/admin/agents/"+flagged+"/act", url.Values{"action": {"reject"}, "versionSeq": {"2"}, "reason": {"unsigned copy"}}, e.asAdmin(tok))
	wantStatus(t, r, 303)
	if loc := r.Header.Get("Location"); loc != "/admin/agents/"+flagged+"?done=decline" {
		t.Fatalf("redirect %q", loc)
	}
	got, _ := e.svc.Get(t.Context(), registry.Principal{Role: registry.RoleAdmin}, flagged)
	if got.Status != registry.StatusApproved || got.NeedsReview || got.VersionSeq != 1 || got.Trust != registry.TrustVerified {
		t.Fatalf("after decline: %+v", got)
	}
	d := parse(t, e.do("GET", "/admin/agents/"+flagged+"?done=decline", nil, e.asAdmin(tok)))
	if got := d.text("#done"); got != "Declined: the last trusted version stays current." {
		t.Errorf("done %q", got)
	}
	if got := texts(d.all("#decide form.action button")); strings.Join(got, ",") != "suspend,remove" {
		t.Errorf("actions after decline %v", got)
	}
	if n := len(resultRowIDs(parse(t, e.do("GET", "/admin?view=flagged", nil, e.asAdmin(tok))))); n != 0 {
		t.Errorf("%d agents still flagged", n)
	}
	audit := parse(t, e.do("GET", "/admin/audit?action=reject", nil, e.asAdmin(tok))).text("main")
	if !strings.Contains(audit, "ui-admin") || !strings.Contains(audit, "unsigned copy") {
		t.Errorf("audit page %q", audit)
	}
}

// The audit page filters by a range of days and links downloads of what
// its filters select; the action column is plain table text.
func TestAuditPageRangeAndExport(t *testing.T) {
	e := newEnv(t)
	tok := e.adminToken()
	a := e.submit("audited.example.com")
	e.record(a.ID, fetched{raw: readCard(t, "hotel.json")})
	e.approve(a.ID)
	today := e.clk.Now().UTC().Format(time.DateOnly)
	d := parse(t, e.do("GET", "/admin/audit?action=approve&from="+today+"&to="+today, nil, e.asAdmin(tok)))
	if n := d.count("tr.audit-entry"); n != 1 {
		t.Fatalf("%d entries for today's approvals", n)
	}
	href, _ := attr(d.one("#audit-export a"), "href")
	if href != "/admin/audit/export?action=approve&format=jsonl&from="+today+"&to="+today {
		t.Fatalf("export link %q", href)
	}
	r := e.do("GET", href, nil, e.asAdmin(tok))
	wantStatus(t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/jsonl; charset=utf-8" || strings.Count(r.body, "\n") != 1 || !strings.Contains(r.body, `"action":"approve"`) {
		t.Fatalf("export %q %q", ct, r.body)
	}
	r = e.do("GET", "/admin/audit/export?format=csv&agent="+a.ID, nil, e.asAdmin(tok))
	wantStatus(t, r, 200)
	if !strings.HasPrefix(r.body, "seq,at,actorId,actorName,action,agentId,reason,detail,actorSubject,actorDisplayName\n") || strings.Count(r.body, "\n") != 3 {
		t.Fatalf("csv %q", r.body)
	}
	yesterday := e.clk.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	if n := parse(t, e.do("GET", "/admin/audit?to="+yesterday, nil, e.asAdmin(tok))).count("tr.audit-entry"); n != 0 {
		t.Fatalf("%d entries before today", n)
	}
	wantStatus(t, e.do("GET", "/admin/audit?from=tomorrow", nil, e.asAdmin(tok)), 400)
	wantStatus(t, e.do("GET", "/admin/audit/export?format=xml", nil, e.asAdmin(tok)), 400)
	if r := e.do("GET", "/admin/audit/export?format=csv", nil, nil); r.StatusCode == 200 {
		t.Fatal("the export answers without signing in")
	}
}
