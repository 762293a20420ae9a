package api

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
)

// claimEnv is the API over a Service whose claims and crawls go through the
// real hardened fetcher on loopback, a started scheduler and a verifier,
// all on the harness's Service clock.
type claimEnv struct {
	*harness
	sched   *crawler.Scheduler
	fetcher *fetch.Fetcher
	want    int64
	// dialed records every address the fetcher's dial check saw.
	dialedMu sync.Mutex
	dialed   []netip.AddrPort
}

// opts are func(*registry.ServiceConfig) for the service and func(*Config)
// for the API.
func newClaimEnv(t *testing.T, store *registry.Store, policy registry.AutoApprove, opts ...any) *claimEnv {
	t.Helper()
	e := &claimEnv{}
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	pol.Timeout = 5 * time.Second
	f, err := fetch.New(fetch.Config{Policy: pol, CheckAddr: func(ap netip.AddrPort) error {
		e.dialedMu.Lock()
		e.dialed = append(e.dialed, ap)
		e.dialedMu.Unlock()
		return pol.CheckAddr(ap)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	e.fetcher = f
	e.harness = newHarnessWith(t, store, func(c *registry.ServiceConfig) {
		c.URLPolicy = registry.URLPolicy{AllowInsecureHTTP: true, AllowNetworks: pol.AllowNetworks}
		c.ClaimFetcher = f
		c.CatalogCrawler = crawler.CatalogCrawler{Fetcher: f}
		c.AutoApprove = policy
		for _, o := range opts {
			if o, ok := o.(func(*registry.ServiceConfig)); ok {
				o(c)
			}
		}
	}, apiOpts(t, opts)...)
	v := verifier.New(verifier.Config{Fetcher: f, Now: e.svcClock.Now})
	e.sched, err = crawler.NewScheduler(crawler.SchedulerConfig{Registry: e.svc, Fetcher: f, Verifier: v, Now: e.svcClock.Now,
		Rand: func() float64 { return 0.5 }, Tick: time.Hour, Workers: 2, Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e.sched.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.sched.Shutdown(ctx); err != nil {
			t.Errorf("scheduler shutdown: %v", err)
		}
	})
	return e
}

// crawl kicks the scheduler and waits, with a deadline, until n more
// results are settled.
func (e *claimEnv) crawl(n int64) {
	e.t.Helper()
	e.want += n
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		s := e.sched.Stats()
		if s.RecordErrors > 0 {
			e.t.Fatalf("the registry refused %d results: %+v\n%s", s.RecordErrors, s, e.logs.String())
		}
		if s.Recorded+s.LeaseLost >= e.want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("scheduler settled %d of %d crawls: %+v", s.Recorded+s.LeaseLost, e.want, s)
		}
		if i%25 == 0 {
			// A claim run takes at most the per-host cap of each host's
			// due agents: kick again until every one is taken.
			e.sched.Kick()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *claimEnv) dialedAddr(a string) bool {
	e.dialedMu.Lock()
	defer e.dialedMu.Unlock()
	return slices.ContainsFunc(e.dialed, func(ap netip.AddrPort) bool { return ap.Addr().String() == a })
}

// site is a loopback web server whose answer a test sets, counting the
// requests it got and remembering their paths.
type site struct {
	srv   *httptest.Server
	host  string // host:port
	reqs  atomic.Int64
	mu    sync.Mutex
	paths []string
	h     http.HandlerFunc
}

func newSite(t *testing.T, addr string) *site {
	t.Helper()
	s := &site{}
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reqs.Add(1)
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		h := s.h
		s.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	s.host = ln.Addr().String()
	return s
}

func (s *site) set(h http.HandlerFunc) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func (s *site) serve(body string) {
	s.set(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, body)
	})
}

func (e *claimEnv) newClaim(host string) registry.HostClaim {
	e.t.Helper()
	r := e.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(`{"host":"` + host + `","scheme":"http"}`)})
	r.expectStatus(e.t, http.StatusCreated)
	var c registry.HostClaim
	r.json(e.t, &c)
	return c
}

type claimedJSON struct {
	Host           string    `json:"host"`
	PublisherToken string    `json:"publisherToken"`
	TokenID        string    `json:"tokenId"`
	ExpiresAt      time.Time `json:"expiresAt"`
}

// publisher claims s's host and returns the publisher token.
func (e *claimEnv) publisher(s *site) claimedJSON {
	e.t.Helper()
	c := e.newClaim(s.host)
	s.serve(c.Token + "\n")
	return e.verify(c.ID)
}

// verify verifies a claim whose token is served and returns its token.
func (e *claimEnv) verify(id string) claimedJSON {
	e.t.Helper()
	r := e.do(req{method: "POST", path: "/api/v1/claims/" + id + "/verify"})
	r.expectStatus(e.t, http.StatusOK)
	var out claimedJSON
	r.json(e.t, &out)
	return out
}

// fleetPublisher claims the origin of a fleet host (the host serves the
// token as one more path) and returns the publisher token.
func (e *claimEnv) fleetPublisher(fleet *agentfleet.Fleet, h *agentfleet.Host) claimedJSON {
	e.t.Helper()
	c := e.newClaim(strings.TrimPrefix(h.Origin(), "http://"))
	fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: h, Path: registry.ClaimPath + c.Token, Card: []byte(c.Token)})
	return e.verify(c.ID)
}

func (e *claimEnv) verifyFails(id, reason, class string) problem {
	e.t.Helper()
	p := e.do(req{method: "POST", path: "/api/v1/claims/" + id + "/verify", body: jsonBody(`{}`)}).
		expectProblem(e.t, http.StatusConflict, "claim-failed")
	if p.Reason != reason || p.ErrorClass != class || p.Detail == "" {
		e.t.Fatalf("claim-failed %+v, want reason %q class %q", p, reason, class)
	}
	// The claim's next attempt may come once the interval is over.
	e.svcClock.Advance(registry.DefaultClaimAttemptInterval)
	return p
}

// A claim verified by the token served at its URL: one publisher token,
// scoped to the host name, valid 90 days, usable at once; the claim cannot
// be replayed for a second token.
func TestClaimServedToken(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		s := newSite(t, "127.0.0.1")
		r := e.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(`{"host":"` + s.host + `","scheme":"http"}`)})
		r.expectStatus(t, http.StatusCreated)
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", r.header.Get("Cache-Control"))
		}
		var c registry.HostClaim
		r.json(t, &c)
		if loc := r.header.Get("Location"); loc != "/api/v1/claims/"+c.ID {
			t.Errorf("Location %q", loc)
		}
		wantURL := "http://" + s.host + "/.well-known/cardex-claim/" + c.Token
		if c.Host != s.host || c.URL != wantURL || len(c.Token) != 43 || len(c.ID) < 22 ||
			!c.ExpiresAt.Equal(e.svcClock.Now().Add(time.Hour).Truncate(time.Microsecond)) && !c.ExpiresAt.Equal(e.svcClock.Now().Add(time.Hour)) {
			t.Fatalf("claim %+v (want url %s)", c, wantURL)
		}
		if s.reqs.Load() != 0 {
			t.Fatalf("issuing a claim fetched %d times", s.reqs.Load())
		}
		// The token is served after a same-origin redirect, with the
		// trailing newline `echo` leaves.
		s.set(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/moved" {
				fmt.Fprintln(w, c.Token)
				return
			}
			http.Redirect(w, r, "/moved", http.StatusFound)
		})
		v := e.do(req{method: "POST", path: "/api/v1/claims/" + c.ID + "/verify"})
		v.expectStatus(t, http.StatusOK)
		if v.header.Get("Cache-Control") != "no-store" {
			t.Errorf("verify Cache-Control %q", v.header.Get("Cache-Control"))
		}
		var out claimedJSON
		v.json(t, &out)
		s.mu.Lock()
		paths := slices.Clone(s.paths)
		s.mu.Unlock()
		if len(paths) != 2 || paths[0] != "/.well-known/cardex-claim/"+c.Token || paths[1] != "/moved" {
			t.Errorf("the site saw %q", paths)
		}
		wantExp := e.svcClock.Now().Add(90 * 24 * time.Hour)
		if out.Host != s.host || !strings.HasPrefix(out.PublisherToken, "cdx_") || out.TokenID == "" ||
			out.ExpiresAt.Sub(wantExp).Abs() > time.Millisecond {
			t.Fatalf("verified %+v, want expiry %v", out, wantExp)
		}
		p, err := e.svc.Authenticate(e.ctx(), out.PublisherToken)
		if err != nil || p.Role != registry.RolePublisher || p.TokenID != out.TokenID || !slices.Equal(p.Hosts, []string{"127.0.0.1"}) {
			t.Fatalf("publisher token authenticates as %+v, %v", p, err)
		}

		// Replayed: the claim verified once; no second token.
		before := s.reqs.Load()
		e.verifyFails(c.ID, registry.ClaimReplayed, "")
		if s.reqs.Load() != before {
			t.Error("a replayed claim was fetched again")
		}
		admin := e.token(registry.RoleAdmin)
		var toks struct{ Tokens []registry.Token }
		e.do(req{method: "GET", path: "/api/v1/tokens", token: admin}).json(t, &toks)
		pubs := 0
		for _, tk := range toks.Tokens {
			if tk.Role == registry.RolePublisher {
				pubs++
			}
		}
		if pubs != 1 {
			t.Errorf("%d publisher tokens after a replay, want 1", pubs)
		}
		// The audit log names the claim that made the token.
		entries, _, err := e.svc.Audit(e.ctx(), registry.Principal{Role: registry.RoleAdmin}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range entries {
			if a.Action == "token-create" && a.ActorName == "host-claim" && a.Detail["claimId"] == c.ID && a.Detail["tokenId"] == out.TokenID {
				found = true
			}
		}
		if !found {
			t.Errorf("no token-create audit entry for the claim: %+v", entries)
		}
		// An unknown claim is not found.
		e.do(req{method: "POST", path: "/api/v1/claims/nope/verify"}).expectProblem(t, http.StatusNotFound, "not-found")
	})
}

// Every way a claim fails: wrong content, an error status, an oversized
// body, a redirect to another origin or to a reserved address (never
// dialed), an expired claim (never fetched). A failed attempt does not
// spend the claim: served right, it verifies afterwards.
func TestClaimFailures(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		s := newSite(t, "127.0.0.1")
		other := newSite(t, "127.0.0.2")
		other.serve("whatever")
		c := e.newClaim(s.host)

		s.serve("not the token")
		e.verifyFails(c.ID, registry.ClaimWrongContent, "")
		s.serve(c.Token + c.Token)
		e.verifyFails(c.ID, registry.ClaimWrongContent, "")
		s.set(http.NotFound)
		e.verifyFails(c.ID, registry.ClaimFetchFailed, fetch.ClassHTTPStatus)
		s.serve(c.Token + strings.Repeat(" ", 300))
		e.verifyFails(c.ID, registry.ClaimFetchFailed, fetch.ClassTooLarge)
		s.set(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+other.host+r.URL.Path, http.StatusFound)
		})
		e.verifyFails(c.ID, registry.ClaimFetchFailed, fetch.ClassCrossOriginRedirect)
		if other.reqs.Load() != 0 {
			t.Errorf("the other origin got %d requests", other.reqs.Load())
		}
		s.set(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		})
		e.verifyFails(c.ID, registry.ClaimFetchFailed, fetch.ClassCrossOriginRedirect)
		if e.dialedAddr("169.254.169.254") {
			t.Error("the reserved address was dialed")
		}

		// After all that, the right answer still verifies.
		s.serve(c.Token)
		e.do(req{method: "POST", path: "/api/v1/claims/" + c.ID + "/verify"}).expectStatus(t, http.StatusOK)

		// Expired: an hour later the claim is refused without a fetch.
		late := e.newClaim(s.host)
		s.serve(late.Token)
		e.svcClock.Advance(time.Hour)
		before := s.reqs.Load()
		e.verifyFails(late.ID, registry.ClaimExpired, "")
		if s.reqs.Load() != before {
			t.Error("an expired claim was fetched")
		}

		// A host the claim rule refuses never becomes a claim.
		for body, slug := range map[string]string{
			`{"host":"10.0.0.1","scheme":"http"}`:              "reserved-address",
			`{"host":"http://` + s.host + `","scheme":"http"}`: "validation-failed",
			`{"host":"` + s.host + `/x","scheme":"http"}`:      "validation-failed",
			`{"host":"","scheme":"http"}`:                      "validation-failed",
			`{"host":"` + s.host + `","scheme":"ftp"}`:         "validation-failed",
			`{"scheme":"http"}`:                                "validation-failed",
			`{"host":"a.example.com","extra":1}`:               "unknown-field",
		} {
			e.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(body)}).expectProblem(t, http.StatusBadRequest, slug)
		}
	})
}

// Without --allow-insecure-http a claim is https only; a server without a
// claim fetcher cannot verify (503, no Retry-After: not configured).
func TestClaimPolicyAndUnconfigured(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		p := h.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(`{"host":"agent.example.com","scheme":"http"}`)}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		if len(p.Errors) != 1 || p.Errors[0].Pointer != "/scheme" {
			t.Errorf("errors %+v", p.Errors)
		}
		r := h.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(`{"host":"Agent.Example.COM."}`)})
		r.expectStatus(t, http.StatusCreated)
		var c registry.HostClaim
		r.json(t, &c)
		if c.Host != "agent.example.com" || c.URL != "https://agent.example.com/.well-known/cardex-claim/"+c.Token {
			t.Errorf("claim %+v", c)
		}
		v := h.do(req{method: "POST", path: "/api/v1/claims/" + c.ID + "/verify"})
		v.expectProblem(t, http.StatusServiceUnavailable, "unavailable")
		if v.header.Get("Retry-After") != "" {
			t.Errorf("Retry-After %q on an unconfigured feature", v.header.Get("Retry-After"))
		}
	})
}

// Claims spend the anonymous submission budget of the address.
func TestClaimRateLimited(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store, func(c *Config) { c.Limits.SubmitPerAddress = ratelimit.Rate{N: 2, Per: time.Minute} })
		for i := range 2 {
			h.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(fmt.Sprintf(`{"host":"a%d.example.com"}`, i))}).
				expectStatus(t, http.StatusCreated)
		}
		r := h.do(req{method: "POST", path: "/api/v1/claims", body: jsonBody(`{"host":"a3.example.com"}`)})
		r.expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		if r.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		h.do(req{method: "POST", path: "/api/v1/claims/x/verify"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	})
}

// What a publisher token from a claim may do on its host, and nothing
// more: submit, re-crawl, read traces and pending versions, withdraw with a
// reason audited as itself, list and revoke itself. Another host, and every
// admin action, is 403.
func TestClaimPublisherRights(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2})
		mine := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: fleet.Hosts()[0]})
		theirs := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: fleet.Hosts()[1]})
		pub := e.fleetPublisher(fleet, fleet.Hosts()[0])
		tok := pub.PublisherToken

		a := e.submit(mine.URL(), tok)
		e.do(req{method: "POST", path: "/api/v1/agents", token: tok, body: jsonBody(`{"cardUrl":"` + theirs.URL() + `"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		b := e.submit(theirs.URL(), "")
		e.crawl(2)

		e.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/crawl", token: tok}).expectStatus(t, http.StatusAccepted)
		e.do(req{method: "POST", path: "/api/v1/agents/" + b.ID + "/crawl", token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")
		// The re-crawl it asked for runs in the scheduler; wait for it
		// rather than race it.
		e.crawl(1)
		var fetches struct{ Fetches []registry.FetchAttempt }
		e.do(req{method: "GET", path: "/api/v1/agents/" + a.ID + "/fetches", token: tok}).json(t, &fetches)
		if len(fetches.Fetches) != 2 || fetches.Fetches[0].Result != registry.ResultUnchanged || fetches.Fetches[1].Result != registry.ResultNewVersion {
			t.Errorf("fetches %+v, want the re-crawl (unchanged) after the first (new version)", fetches.Fetches)
		}
		e.do(req{method: "GET", path: "/api/v1/agents/" + b.ID + "/fetches", token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")
		var vs struct{ Versions []registry.Version }
		e.do(req{method: "GET", path: "/api/v1/agents/" + a.ID + "/versions", token: tok}).json(t, &vs)
		if len(vs.Versions) != 1 || !vs.Versions[0].Current {
			t.Errorf("versions of the pending agent %+v", vs.Versions)
		}
		// Its own pending agent is in its listing; the other host's is not.
		page := listAll(t, e.harness, tok)
		if len(page.Agents) != 1 || page.Agents[0].ID != a.ID || page.Agents[0].Status != registry.StatusPending {
			t.Errorf("publisher lists %+v", page.Agents)
		}
		for _, action := range []string{"approve", "reject", "suspend", "restore"} {
			e.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/" + action, token: tok, body: jsonBody(`{"versionSeq":1}`)}).
				expectProblem(t, http.StatusForbidden, "forbidden")
		}
		e.do(req{method: "PATCH", path: "/api/v1/agents/" + a.ID, token: tok, body: jsonBody(`{"visibility":"internal"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "PUT", path: "/api/v1/agents/" + a.ID + "/keys", token: tok, body: jsonBody(`{"keys":[]}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "GET", path: "/api/v1/audit", token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "POST", path: "/api/v1/admin/reindex", token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")

		// Withdraw: its own agent, with a reason, audited as the token.
		e.do(req{method: "DELETE", path: "/api/v1/agents/" + b.ID, token: tok, body: jsonBody(`{"reason":"not mine"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		var gone registry.Agent
		e.do(req{method: "DELETE", path: "/api/v1/agents/" + a.ID, token: tok, body: jsonBody(`{"reason":"retired"}`)}).json(t, &gone)
		if gone.Status != registry.StatusRemoved {
			t.Fatalf("withdrawn agent %+v", gone)
		}
		entries, _, err := e.svc.Audit(e.ctx(), registry.Principal{Role: registry.RoleAdmin}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		last := entries[len(entries)-1]
		if last.Action != "remove" || last.AgentID != a.ID || last.ActorID != pub.TokenID || last.Reason != "retired" || !strings.HasPrefix(last.ActorName, "publisher-") {
			t.Errorf("withdraw audited as %+v", last)
		}
		// Resubmitting a withdrawn agent needs an admin.
		e.do(req{method: "POST", path: "/api/v1/agents", token: tok, body: jsonBody(`{"cardUrl":"` + mine.URL() + `"}`)}).
			expectProblem(t, http.StatusConflict, "agent-removed")

		// Tokens: itself only; another token's revocation is refused.
		var toks struct{ Tokens []registry.Token }
		e.do(req{method: "GET", path: "/api/v1/tokens", token: tok}).json(t, &toks)
		if len(toks.Tokens) != 1 || toks.Tokens[0].ID != pub.TokenID || !slices.Equal(toks.Tokens[0].Hosts, []string{"127.0.0.1"}) {
			t.Errorf("publisher sees tokens %+v", toks.Tokens)
		}
		_, otherTok, err := e.svc.CreateToken(e.ctx(), registry.TokenRequest{Role: registry.RoleReader})
		if err != nil {
			t.Fatal(err)
		}
		e.do(req{method: "DELETE", path: "/api/v1/tokens/" + otherTok.ID, token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "GET", path: "/api/v1/tokens"}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		e.do(req{method: "DELETE", path: "/api/v1/tokens/" + pub.TokenID, token: tok}).expectStatus(t, http.StatusNoContent)
		e.do(req{method: "GET", path: "/api/v1/tokens", token: tok}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		// Admins revoke any token; again is 204, unknown is 404.
		admin := e.token(registry.RoleAdmin)
		e.do(req{method: "DELETE", path: "/api/v1/tokens/" + otherTok.ID, token: admin}).expectStatus(t, http.StatusNoContent)
		e.do(req{method: "DELETE", path: "/api/v1/tokens/" + otherTok.ID, token: admin}).expectStatus(t, http.StatusNoContent)
		e.do(req{method: "DELETE", path: "/api/v1/tokens/nope", token: admin}).expectProblem(t, http.StatusNotFound, "not-found")
	})
}

func fleetSigner(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
}

// Each policy with signed and unsigned agents, submitted with a claim's
// publisher token, with an admin-made publisher token and anonymously:
//   - never approves nothing;
//   - claimed approves the claim token's agents, signed or not;
//   - verified adds anonymous agents whose card verifies under the origin's
//     keys.
//
// Every automatic approval is audited with the policy and the rule.
func TestAutoApprovePolicies(t *testing.T) {
	for _, policy := range []registry.AutoApprove{registry.AutoApproveNever, registry.AutoApproveClaimed, registry.AutoApproveVerified} {
		t.Run(string(policy), func(t *testing.T) {
			eachStore(t, func(t *testing.T, store *registry.Store) {
				e := newClaimEnv(t, store, policy)
				fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, Signer: fleetSigner})
				home, away := fleet.Hosts()[0], fleet.Hosts()[1]
				pub := e.fleetPublisher(fleet, home)
				cli := e.token(registry.RolePublisher, "127.0.0.1")
				agents := map[string]string{
					"claimed unsigned":     e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL(), pub.PublisherToken).ID,
					"claimed signed":       e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: home}).URL(), pub.PublisherToken).ID,
					"admin token unsigned": e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL(), cli).ID,
					"anonymous unsigned":   e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: away}).URL(), "").ID,
					"anonymous signed":     e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: away}).URL(), "").ID,
					"anonymous tampered":   e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Tampered, Host: away}).URL(), "").ID,
				}
				e.crawl(int64(len(agents)))
				want := map[registry.AutoApprove]map[string]string{
					registry.AutoApproveNever:    {},
					registry.AutoApproveClaimed:  {"claimed unsigned": "claimed", "claimed signed": "claimed"},
					registry.AutoApproveVerified: {"claimed unsigned": "claimed", "claimed signed": "claimed", "anonymous signed": "verified"},
				}[policy]
				entries, _, err := e.svc.Audit(e.ctx(), registry.Principal{Role: registry.RoleAdmin}, 0, 1000)
				if err != nil {
					t.Fatal(err)
				}
				rules := map[string]string{}
				for _, a := range entries {
					if a.Action == registry.ActionAutoApprove {
						if a.ActorName != "auto-approve" || a.Detail["policy"] != string(policy) || a.Detail["versionSeq"] != float64(1) {
							t.Errorf("audit entry %+v", a)
						}
						rules[a.AgentID] = a.Detail["rule"].(string)
					}
				}
				for name, id := range agents {
					ag, err := e.svc.Get(e.ctx(), registry.Principal{Role: registry.RoleAdmin}, id)
					if err != nil {
						t.Fatal(err)
					}
					rule, approved := want[name]
					switch {
					case ag.Health != registry.HealthOK:
						t.Errorf("%s: health %s (%+v)", name, ag.Health, ag.LastError)
					case approved && (ag.Status != registry.StatusApproved || rules[id] != rule):
						t.Errorf("%s: status %s, audited rule %q; want approved by %q", name, ag.Status, rules[id], rule)
					case !approved && (ag.Status != registry.StatusPending || rules[id] != ""):
						t.Errorf("%s: status %s, audited rule %q; want pending", name, ag.Status, rules[id])
					}
				}
				if len(rules) != len(want) {
					t.Errorf("%d auto-approvals audited, want %d", len(rules), len(want))
				}
				recent, err := e.svc.AuditLog(e.ctx(), registry.Principal{Role: registry.RoleAdmin},
					registry.AuditQuery{Newest: true, Actions: []string{registry.ActionAutoApprove}, Limit: 10})
				if err != nil || len(recent.Entries) != len(want) {
					t.Errorf("recent auto-approvals %+v (%v), want %d", recent, err, len(want))
				}
				// Approved agents are listed to everyone.
				if got := len(listAll(t, e.harness, "").Agents); got != len(want) {
					t.Errorf("anonymous listing has %d agents, want %d", got, len(want))
				}
			})
		})
	}
}

// mutableCard serves a card the test swaps, and a key set at the origin's
// well-known path.
type mutableCard struct {
	s    *site
	key  crypto.Signer
	kid  string
	card atomic.Pointer[[]byte]
	// claim is the host-claim token served at its well-known path, if any.
	claim atomic.Pointer[string]
}

func newMutableCard(t *testing.T, addr string) *mutableCard {
	t.Helper()
	m := &mutableCard{s: newSite(t, addr)}
	key, err := agentfleet.NewSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	alg, err := agentfleet.Alg(key)
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: key.Public(), Algorithm: alg, Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	jwk.KeyID = fmt.Sprintf("%x", tp[:8])
	m.key, m.kid = key, jwk.KeyID
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
	if err != nil {
		t.Fatal(err)
	}
	m.s.set(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/.well-known/jwks.json" {
			w.Write(set)
			return
		}
		if c := m.claim.Load(); c != nil && r.URL.Path == registry.ClaimPath+*c {
			fmt.Fprint(w, *c)
			return
		}
		w.Write(*m.card.Load())
	})
	return m
}

func (m *mutableCard) url() string { return "http://" + m.s.host + "/.well-known/agent-card.json" }

func (m *mutableCard) serve(t *testing.T, version string, signed bool) {
	t.Helper()
	card := agentfleet.GenerateCard(7, "http://"+m.s.host, version)
	if signed {
		var err error
		if card, err = verifier.Sign(card, m.key, verifier.SignOptions{Kid: m.kid}); err != nil {
			t.Fatal(err)
		}
	}
	m.card.Store(&card)
}

// An auto-approved verified agent whose card then arrives unsigned is
// flagged for review like any other, whatever the policy: the verified
// version stays current, the unsigned one is the candidate, and no second
// automatic approval is written.
func TestAutoApprovedTrustRegressionFlags(t *testing.T) {
	for _, policy := range []registry.AutoApprove{registry.AutoApproveClaimed, registry.AutoApproveVerified} {
		t.Run(string(policy), func(t *testing.T) {
			eachStore(t, func(t *testing.T, store *registry.Store) {
				e := newClaimEnv(t, store, policy)
				m := newMutableCard(t, "127.0.0.1")
				m.serve(t, "1.0.0", true)
				tok := ""
				if policy == registry.AutoApproveClaimed {
					c := e.newClaim(m.s.host)
					m.claim.Store(&c.Token)
					tok = e.verify(c.ID).PublisherToken
				}
				id := e.submit(m.url(), tok).ID
				e.crawl(1)
				admin := registry.Principal{Role: registry.RoleAdmin}
				a, err := e.svc.Get(e.ctx(), admin, id)
				if err != nil || a.Status != registry.StatusApproved || a.Trust != registry.TrustVerified {
					t.Fatalf("after the first fetch: %+v, %v", a, err)
				}
				m.serve(t, "2.0.0", false)
				if _, err := e.svc.RequestCrawl(e.ctx(), admin, id); err != nil {
					t.Fatal(err)
				}
				e.crawl(1)
				a, err = e.svc.Get(e.ctx(), admin, id)
				if err != nil || a.Status != registry.StatusApproved || !a.NeedsReview || a.Trust != registry.TrustVerified || a.VersionSeq != 1 {
					t.Fatalf("after the unsigned card: %+v, %v", a, err)
				}
				vs, err := e.svc.Versions(e.ctx(), admin, id)
				if err != nil || len(vs) != 2 || !vs[0].Candidate || vs[0].Trust != registry.TrustUnsigned {
					t.Fatalf("versions %+v, %v", vs, err)
				}
				recent, err := e.svc.AuditLog(e.ctx(), admin, registry.AuditQuery{Newest: true, Actions: []string{registry.ActionAutoApprove}})
				if err != nil || len(recent.Entries) != 1 || recent.Entries[0].AgentID != id {
					t.Fatalf("auto-approvals %+v, %v", recent, err)
				}
			})
		})
	}
}

// Verifications racing on one claim issue one token and fetch once: the
// attempt is spent by a conditional update, so one goes through and the
// others are told to wait (429) or, once it verified, already-verified.
func TestClaimConcurrentVerifyIssuesOneToken(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		s := newSite(t, "127.0.0.1")
		c := e.newClaim(s.host)
		s.serve(c.Token)
		const n = 4
		statuses := make(chan int, n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				hr, err := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/api/v1/claims/"+c.ID+"/verify", nil)
				if err != nil {
					errs <- err
					return
				}
				res, err := e.srv.Client().Do(hr)
				if err != nil {
					errs <- err
					return
				}
				defer res.Body.Close()
				r := response{status: res.StatusCode, header: res.Header}
				var body map[string]any
				if err := decodeAndValidate(hr, res, &r, &body); err != nil {
					errs <- err
					return
				}
				if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") != "5" {
					errs <- fmt.Errorf("429 with Retry-After %q", res.Header.Get("Retry-After"))
				}
				if res.StatusCode == http.StatusConflict && body["reason"] != registry.ClaimReplayed {
					errs <- fmt.Errorf("409 with reason %v", body["reason"])
				}
				statuses <- res.StatusCode
			})
		}
		wg.Wait()
		close(statuses)
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		count := map[int]int{}
		for st := range statuses {
			count[st]++
		}
		if count[http.StatusOK] != 1 || count[http.StatusConflict]+count[http.StatusTooManyRequests] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 409 or 429", count, n-1)
		}
		if got := s.reqs.Load(); got != 1 {
			t.Fatalf("the host was fetched %d times, want 1", got)
		}
		toks, err := e.svc.ListTokens(e.ctx())
		if err != nil || len(toks) != 1 || toks[0].Role != registry.RolePublisher {
			t.Fatalf("tokens %+v, %v", toks, err)
		}
	})
}

// Unverified claims are deleted a day after they expired (the next claim's
// insert does it): a late verification then answers not found.
func TestExpiredClaimsAreDeleted(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		s := newSite(t, "127.0.0.1")
		old := e.newClaim(s.host)
		kept := e.newClaim(s.host)
		s.serve(kept.Token)
		e.do(req{method: "POST", path: "/api/v1/claims/" + kept.ID + "/verify"}).expectStatus(t, http.StatusOK)
		e.svcClock.Advance(time.Hour + 24*time.Hour)
		e.verifyFails(old.ID, registry.ClaimExpired, "")
		e.svcClock.Advance(time.Second)
		e.newClaim(s.host)
		e.do(req{method: "POST", path: "/api/v1/claims/" + old.ID + "/verify"}).expectProblem(t, http.StatusNotFound, "not-found")
		// A verified claim stays: it answers already-verified, not not-found.
		e.verifyFails(kept.ID, registry.ClaimReplayed, "")
	})
}

// apiOpts picks the API options out of newClaimEnv's opts.
func apiOpts(t *testing.T, opts []any) []func(*Config) {
	var out []func(*Config)
	for _, o := range opts {
		switch o := o.(type) {
		case func(*Config):
			out = append(out, o)
		case func(*registry.ServiceConfig):
		default:
			t.Fatalf("newClaimEnv: option of type %T", o)
		}
	}
	return out
}
