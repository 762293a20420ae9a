package api

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// docs/threats.md K.99: a claim's publisher token has a submission budget
// of its own, keyed by the token: past it, submissions and crawl requests
// are 429 with Retry-After, whatever the address; an admin token is not
// limited. (The token once lifted every limit: 1,500 submissions in 54 s.)
func TestPublisherTokenHasItsOwnBudget(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever, func(c *Config) {
			c.Limits = ratelimit.Limits{SubmitPerAddress: ratelimit.Rate{N: 100, Per: time.Minute},
				SubmitPerDomain: ratelimit.Rate{N: 1000, Per: time.Hour}, SubmitPerToken: ratelimit.Rate{N: 3, Per: time.Minute}}
		})
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 1})
		home := fleet.Hosts()[0]
		pub := e.fleetPublisher(fleet, home).PublisherToken
		var first registry.Agent
		for i := range 3 {
			a := e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL(), pub)
			if i == 0 {
				first = a
			}
		}
		next := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL()
		r := e.do(req{method: "POST", path: "/api/v1/agents", token: pub, body: jsonBody(`{"cardUrl":"` + next + `"}`)})
		if p := r.expectProblem(t, http.StatusTooManyRequests, "rate-limited"); p.Detail != "too many requests with this token" {
			t.Fatalf("fourth submission: %+v", p)
		}
		if ra := r.header.Get("Retry-After"); ra != "20" {
			t.Fatalf("Retry-After %q", ra)
		}
		// From another address, the same token is the same budget.
		e.do(req{method: "POST", path: "/api/v1/agents/" + first.ID + "/crawl", token: pub,
			header: []string{"X-Forwarded-For", "198.51.100.7"}}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		e.do(req{method: "POST", path: "/api/v1/claims", token: pub, body: jsonBody(`{"host":"` + strings.TrimPrefix(home.Origin(), "http://") + `","scheme":"http"}`)}).
			expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		// Anonymous submissions of the same host are not blocked by it.
		e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL(), "")
		admin := e.token(registry.RoleAdmin)
		for range 5 {
			e.submit(fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL(), admin)
		}
		e.clock.Advance(20 * time.Second)
		e.submit(next, pub)
		e.do(req{method: "POST", path: "/api/v1/agents", token: pub, body: jsonBody(`{"cardUrl":"` + home.Origin() + `/x"}`)}).
			expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	})
}

// docs/security.md "Budgets per token kind": a reader token submits on the
// budget of its address, like an anonymous caller; it does not lift it.
func TestReaderTokenSubmitsOnTheAddressBudget(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store, func(c *Config) { c.Limits.SubmitPerAddress = ratelimit.Rate{N: 2, Per: time.Minute} })
		reader := h.token(registry.RoleReader)
		h.submit("https://a1.example.com/", reader)
		h.submit("https://a2.example.com/", reader)
		p := h.do(req{method: "POST", path: "/api/v1/agents", token: reader, body: jsonBody(`{"cardUrl":"https://a3.example.com/"}`)}).
			expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		if p.Detail != "too many submissions from this address" {
			t.Fatalf("reader past the address budget: %+v", p)
		}
		h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://a4.example.com/"}`)}).
			expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		h.submit("https://a5.example.com/", h.token(registry.RoleAdmin))
	})
}

// slowSite answers every request after a pause, counting the requests in
// flight at once.
func slowSite(t *testing.T, pause time.Duration) (*site, *atomic.Int64) {
	s := newSite(t, "127.0.0.1")
	var cur, peak atomic.Int64
	s.set(func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(pause) // a slow host, not a wait for background work
		fmt.Fprint(w, "not the token")
	})
	return s, &peak
}

// docs/threats.md K.99: claim verifications are not a request cannon.
// Twelve verifications of twelve claims on one host, sent at once, reach
// the host at most fetch.DefaultClaimsPerHost at a time (they once all
// went at once); a second attempt on one claim within the interval is 429
// with Retry-After and fetches nothing.
func TestClaimFetchesArePolite(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		s, peak := slowSite(t, 40*time.Millisecond)
		admin := e.token(registry.RoleAdmin)
		const n = 12
		ids := make([]string, n)
		for i := range ids {
			r := e.do(req{method: "POST", path: "/api/v1/claims", token: admin, body: jsonBody(`{"host":"` + s.host + `","scheme":"http"}`)})
			r.expectStatus(t, http.StatusCreated)
			var c registry.HostClaim
			r.json(t, &c)
			ids[i] = c.ID
		}
		var wg sync.WaitGroup
		statuses := make(chan int, n)
		for _, id := range ids {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				hr, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/api/v1/claims/"+id+"/verify", nil)
				res, err := e.srv.Client().Do(hr)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				statuses <- res.StatusCode
			})
		}
		wg.Wait()
		close(statuses)
		for st := range statuses {
			if st != http.StatusConflict {
				t.Errorf("a verification answered %d, want 409 wrong-content", st)
			}
		}
		if got := s.reqs.Load(); got != n {
			t.Fatalf("the host got %d requests, want %d", got, n)
		}
		if p := peak.Load(); p > fetch.DefaultClaimsPerHost {
			t.Fatalf("%d claim fetches in flight to one host, want at most %d", p, fetch.DefaultClaimsPerHost)
		}

		// One claim, tried again at once: 429, nothing fetched.
		r := e.do(req{method: "POST", path: "/api/v1/claims/" + ids[0] + "/verify"})
		r.expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		if ra := r.header.Get("Retry-After"); ra != "5" {
			t.Fatalf("Retry-After %q", ra)
		}
		if got := s.reqs.Load(); got != n {
			t.Fatalf("a refused attempt fetched: %d requests", got)
		}
		e.svcClock.Advance(registry.DefaultClaimAttemptInterval)
		e.verifyFails(ids[0], registry.ClaimWrongContent, "")
	})
}

// docs/threats.md K.101: no set of other clients can lock a host's owner
// out of claiming it. Twenty addresses do all they can against the host:
// claims until refused, submissions of its card URLs until refused (the
// per-domain budget is spent), verification attempts until refused. The
// owner, from its own address, still gets a claim and verifies it. (Claims
// once spent the per-domain budget: ~130 requests from 13 addresses made
// the owner's claim 429.)
func TestClaimOwnerIsNeverLockedOut(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever, func(c *Config) {
			c.Limits = ratelimit.DefaultLimits()
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		})
		s := newSite(t, "127.0.0.1")
		claimBody := jsonBody(`{"host":"` + s.host + `","scheme":"http"}`)
		as := func(addr string, r req) response {
			r.header = append(r.header, "X-Forwarded-For", addr)
			return e.do(r)
		}
		refusals := map[string]int{}
		claimed := map[int]int{} // claims an address got → addresses
		for i := range 20 {
			addr := fmt.Sprintf("198.51.100.%d", i+1)
			var mine []string
			for {
				r := as(addr, req{method: "POST", path: "/api/v1/claims", body: jsonBody(`{"host":"` + s.host + `","scheme":"http"}`)})
				if r.status != http.StatusCreated {
					refusals[r.expectProblem(t, http.StatusTooManyRequests, "rate-limited").Detail]++
					break
				}
				var c registry.HostClaim
				r.json(t, &c)
				mine = append(mine, c.ID)
			}
			claimed[len(mine)]++
			for j := 0; ; j++ {
				r := as(addr, req{method: "POST", path: "/api/v1/agents", body: jsonBody(fmt.Sprintf(`{"cardUrl":"http://%s/a%d-%d"}`, s.host, i, j))})
				if r.status != http.StatusAccepted {
					refusals[r.expectProblem(t, http.StatusTooManyRequests, "rate-limited").Detail]++
					break
				}
			}
			for range 2 {
				for _, id := range mine {
					switch r := as(addr, req{method: "POST", path: "/api/v1/claims/" + id + "/verify"}); r.status {
					case http.StatusConflict, http.StatusTooManyRequests:
					default:
						t.Fatalf("%s verifying its claim: %d %s", addr, r.status, r.body)
					}
				}
			}
		}
		// The owner, from its own address.
		r := as("203.0.113.9", req{method: "POST", path: "/api/v1/claims", body: claimBody})
		r.expectStatus(t, http.StatusCreated)
		var c registry.HostClaim
		r.json(t, &c)
		s.serve(c.Token)
		v := as("203.0.113.9", req{method: "POST", path: "/api/v1/claims/" + c.ID + "/verify"})
		v.expectStatus(t, http.StatusOK)
		// What the others could do: each address its own few claims, and
		// the domain budget spent.
		if claimed[registry.DefaultClaimsPending] != 20 || refusals["too many submissions for this domain"] == 0 ||
			refusals["too many unverified claims on this host from this client; verify one or let it expire"] != 20 {
			t.Fatalf("addresses by claims got %v, refusals %v; want every address at its claim cap and the domain budget spent", claimed, refusals)
		}
	})
}

// docs/threats.md K.104: a claim proved on one port of an address acts on
// that origin only. Another tenant's agent on another port of the same
// address cannot be withdrawn, re-crawled, read or submitted by it (a
// claim on :9000 once withdrew the agent on :9001); its own origin's
// agents can.
func TestClaimTokenIsScopedToItsOrigin(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		ours := agentfleet.Start(t, agentfleet.Options{Hosts: 1})
		theirs := agentfleet.Start(t, agentfleet.Options{Hosts: 1})
		home, other := ours.Hosts()[0], theirs.Hosts()[0]
		if strings.Split(home.Origin(), ":")[1] != strings.Split(other.Origin(), ":")[1] {
			t.Fatalf("the fleets are on different addresses: %s %s", home.Origin(), other.Origin())
		}
		pub := e.fleetPublisher(ours, home)
		tok := pub.PublisherToken
		victim := e.submit(theirs.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: other}).URL(), "")
		mine := e.submit(ours.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: home}).URL(), tok)
		e.crawl(2)
		admin := e.token(registry.RoleAdmin)
		e.do(req{method: "POST", path: "/api/v1/agents/" + victim.ID + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectStatus(t, http.StatusOK)

		e.do(req{method: "DELETE", path: "/api/v1/agents/" + victim.ID, token: tok, body: jsonBody(`{"reason":"mine now"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "POST", path: "/api/v1/agents/" + victim.ID + "/crawl", token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "GET", path: "/api/v1/agents/" + victim.ID + "/fetches", token: tok}).expectProblem(t, http.StatusForbidden, "forbidden")
		e.do(req{method: "POST", path: "/api/v1/agents", token: tok, body: jsonBody(`{"cardUrl":"` + other.Origin() + `/another"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		var a registry.Agent
		e.do(req{method: "GET", path: "/api/v1/agents/" + victim.ID, token: admin}).json(t, &a)
		if a.Status != registry.StatusApproved {
			t.Fatalf("the other tenant's agent is %s", a.Status)
		}
		// Nor does it list or read what only its host's publishers would:
		// the other origin's pending agent is not in its list, and once
		// internal the approved one answers not found.
		pending := e.submit(theirs.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: other}).URL(), "")
		var list struct{ Agents []registry.Agent }
		e.do(req{method: "GET", path: "/api/v1/agents?pageSize=100", token: tok}).json(t, &list)
		for _, l := range list.Agents {
			if l.ID == pending.ID {
				t.Fatal("the claim's token lists another origin's pending agent")
			}
		}
		e.do(req{method: "PATCH", path: "/api/v1/agents/" + victim.ID, token: admin, body: jsonBody(`{"visibility":"internal"}`)}).
			expectStatus(t, http.StatusOK)
		e.do(req{method: "GET", path: "/api/v1/agents/" + victim.ID, token: tok}).expectProblem(t, http.StatusNotFound, "not-found")
		e.do(req{method: "GET", path: "/api/v1/agents/" + mine.ID, token: tok}).expectStatus(t, http.StatusOK)

		var toks struct{ Tokens []registry.Token }
		e.do(req{method: "GET", path: "/api/v1/tokens", token: tok}).json(t, &toks)
		if len(toks.Tokens) != 1 || toks.Tokens[0].Origin != home.Origin() {
			t.Fatalf("the claim's token %+v, want origin %s", toks.Tokens, home.Origin())
		}
		e.do(req{method: "POST", path: "/api/v1/agents/" + mine.ID + "/crawl", token: tok}).expectStatus(t, http.StatusAccepted)
		var gone registry.Agent
		e.do(req{method: "DELETE", path: "/api/v1/agents/" + mine.ID, token: tok, body: jsonBody(`{"reason":"retired"}`)}).json(t, &gone)
		if gone.Status != registry.StatusRemoved {
			t.Fatalf("its own agent after withdrawal: %s", gone.Status)
		}
	})
}
