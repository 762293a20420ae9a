package web_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
	"github.com/cardexhq/cardex/web"
)

// clock is a manually advanced clock shared by the service and the UI.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a real UI over a real SQLite store and a real Bleve index kept in
// step by the real indexer.
type env struct {
	t     testing.TB
	svc   *registry.Service
	idx   *search.Index
	ixr   *search.Indexer
	clk   *clock
	srv   *httptest.Server
	kicks int
	mu    sync.Mutex
	// onKick runs when the UI asks the crawler to fetch (tests play the
	// crawler with it).
	onKick func()
}

type envOption func(*web.Config)

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	return newEnvWith(t, nil, opts...)
}

// newEnvWith is newEnv with svcOpt applied to the Service's configuration
// (a claim fetcher, an approval policy).
func newEnvWith(t testing.TB, svcOpt func(*registry.ServiceConfig), opts ...envOption) *env {
	t.Helper()
	return newEnvOn(t, nil, svcOpt, opts...)
}

// newEnvOn is newEnvWith serving on ln (nil: a fresh loopback port), for
// tests that must know the server's URL before it starts.
func newEnvOn(t testing.TB, ln net.Listener, svcOpt func(*registry.ServiceConfig), opts ...envOption) *env {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	store := registrytest.SQLite(t)
	svcCfg := registry.ServiceConfig{Now: clk.Now, URLPolicy: registry.URLPolicy{
		AllowInsecureHTTP: true, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	if svcOpt != nil {
		svcOpt(&svcCfg)
	}
	svc := registry.NewService(store, svcCfg)
	idx, err := search.Open(filepath.Join(t.TempDir(), "index"), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	if err := idx.Rebuild(context.Background(), svc.IndexSource()); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, svc: svc, idx: idx, ixr: search.NewIndexer(idx, svc.IndexSource(), search.IndexerOptions{}), clk: clk}
	cfg := web.Config{Service: svc, Index: idx, Now: clk.Now, Limits: ratelimit.Limits{SubmitPerAddress: ratelimit.Rate{N: 100, Per: time.Minute}},
		Kick: func() {
			e.mu.Lock()
			e.kicks++
			f := e.onKick
			e.mu.Unlock()
			if f != nil {
				f()
			}
		}}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewUnstartedServer(h)
	if ln != nil {
		e.srv.Listener.Close()
		e.srv.Listener = ln
	}
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

// sync brings the index up to date with SQL.
func (e *env) sync() {
	e.t.Helper()
	if err := e.ixr.Sync(context.Background()); err != nil {
		e.t.Fatalf("index sync: %v", err)
	}
}

var adminP = registry.Principal{Role: registry.RoleAdmin, TokenID: "t-test", Name: "test-admin"}

func readCard(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cards", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fetched is one recorded fetch: the card bytes plus what the verifier
// would have said.
type fetched struct {
	raw        []byte
	trust      registry.Trust
	signatures []registry.SignatureResult
	thumbs     []string
}

// submit registers host's well-known card URL.
func (e *env) submit(host string) *registry.Agent {
	e.t.Helper()
	a, err := e.svc.Submit(context.Background(), registry.Anonymous, "https://"+host+"/.well-known/agent-card.json", "")
	if err != nil {
		e.t.Fatalf("submit %s: %v", host, err)
	}
	return a
}

// record plays the crawler for one agent: claim it, parse the bytes with
// the one strict parser, record the fetch.
func (e *env) record(id string, f fetched) {
	e.t.Helper()
	ctx := context.Background()
	e.clk.Advance(2 * time.Hour) // make every agent due
	due, err := e.svc.ClaimDue(ctx, "web-test", e.clk.Now(), time.Minute, 1000, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var cardURL string
	for _, d := range due {
		if d.ID == id {
			cardURL = d.CardURL
		}
	}
	if cardURL == "" {
		e.t.Fatalf("agent %s is not due", id)
	}
	p, err := agentcard.Parse(f.raw, agentcard.Options{CardURL: cardURL})
	if err != nil {
		e.t.Fatalf("card does not parse: %v", err)
	}
	if f.trust == "" {
		f.trust = registry.TrustUnsigned
	}
	now := e.clk.Now()
	err = e.svc.RecordFetch(ctx, "web-test", id, registry.FetchResult{
		Attempt: registry.FetchAttempt{At: now, URL: cardURL, HTTPStatus: 200, Duration: 30 * time.Millisecond, Bytes: int64(len(f.raw))},
		Raw:     f.raw, Card: p.Card, Problems: p.Problems, ProtocolVersion: first(p.Card.ProtocolVersions),
		Trust: f.trust, Signatures: f.signatures, Thumbprints: f.thumbs, NextFetchAt: now.Add(time.Hour),
	})
	if err != nil {
		e.t.Fatalf("record fetch: %v", err)
	}
	if err := e.svc.ReleaseLeases(ctx, "web-test"); err != nil {
		e.t.Fatal(err)
	}
}

// recordError records a failed fetch.
func (e *env) recordError(id, class string, status int, msg string) {
	e.t.Helper()
	ctx := context.Background()
	e.clk.Advance(2 * time.Hour)
	if _, err := e.svc.ClaimDue(ctx, "web-test", e.clk.Now(), time.Minute, 1000, 1000); err != nil {
		e.t.Fatal(err)
	}
	now := e.clk.Now()
	err := e.svc.RecordFetch(ctx, "web-test", id, registry.FetchResult{
		Attempt:     registry.FetchAttempt{At: now, URL: "https://x/", HTTPStatus: status, ErrorClass: class, Message: msg},
		NextFetchAt: now.Add(time.Hour),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.svc.ReleaseLeases(ctx, "web-test"); err != nil {
		e.t.Fatal(err)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// approve approves the agent's current version.
func (e *env) approve(id string) {
	e.t.Helper()
	a, err := e.svc.Get(context.Background(), adminP, id)
	if err != nil {
		e.t.Fatal(err)
	}
	seq := a.VersionSeq
	if _, err := e.svc.Act(context.Background(), adminP, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: &seq}); err != nil {
		e.t.Fatalf("approve: %v", err)
	}
}

// listed adds an approved agent from a testdata card and returns its id.
func (e *env) listed(host, card string) string {
	e.t.Helper()
	a := e.submit(host)
	e.record(a.ID, fetched{raw: readCard(e.t, card)})
	e.approve(a.ID)
	return a.ID
}

// adminToken creates an admin token and returns its secret.
func (e *env) adminToken() string {
	e.t.Helper()
	secret, _, err := e.svc.CreateToken(context.Background(), registry.TokenRequest{Role: registry.RoleAdmin, Name: "ui-admin"})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// response is a fetched page.
type response struct {
	*http.Response
	body string
}

// do sends a request to the UI without following redirects.
func (e *env) do(method, path string, form url.Values, hdr map[string]string) response {
	e.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{res, string(b)}
}

func (e *env) get(path string) response { return e.do("GET", path, nil, nil) }

// asAdmin is the header set of an admin signed in with token: a session
// started for it, as the sign-in form would.
func (e *env) asAdmin(token string) map[string]string {
	e.t.Helper()
	p, err := e.svc.Authenticate(context.Background(), token)
	if err != nil {
		e.t.Fatalf("asAdmin: %v", err)
	}
	sid, err := e.svc.StartSession(context.Background(), p)
	if err != nil {
		e.t.Fatalf("asAdmin: %v", err)
	}
	return map[string]string{"Cookie": "__Host-cardex_session=" + sid}
}

func wantStatus(t testing.TB, r response, want int) {
	t.Helper()
	if r.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d\n%s", r.Request.Method, r.Request.URL.Path, r.StatusCode, want, clip(r.body))
	}
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}
