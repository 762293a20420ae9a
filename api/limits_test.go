package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// docs/threats.md I.82: an anonymous read flood gets 429 with Retry-After;
// a reader token reads on a budget of its own (K.99), an admin token is not
// limited; the bucket refills.
func TestReadFloodIsLimited(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) {
		c.Limits.ReadPerAddress = ratelimit.Rate{N: 5, Per: time.Second, Burst: 10}
	})
	reader := h.token(registry.RoleReader)
	for i := range 10 {
		if r := h.do(req{method: "GET", path: "/api/v1/agents"}); r.status != http.StatusOK {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := h.do(req{method: "GET", path: "/api/v1/agents"})
	r.expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Every anonymous read shares the budget, including records and feeds.
	h.do(req{method: "GET", path: "/api/v1/changes"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	for range 10 {
		h.do(req{method: "GET", path: "/api/v1/agents", token: reader}).expectStatus(t, http.StatusOK)
	}
	if p := h.do(req{method: "GET", path: "/api/v1/agents", token: reader}).expectProblem(t, http.StatusTooManyRequests, "rate-limited"); p.Detail != "too many requests with this token" {
		t.Fatalf("reader past its budget: %+v", p)
	}
	admin := h.token(registry.RoleAdmin)
	for range 20 {
		h.do(req{method: "GET", path: "/api/v1/agents", token: admin}).expectStatus(t, http.StatusOK)
	}
	// Probes are never limited.
	h.do(req{method: "GET", path: "/healthz"}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/readyz"}).expectStatus(t, http.StatusOK)
	h.clock.Advance(200 * time.Millisecond)
	h.do(req{method: "GET", path: "/api/v1/agents"}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/api/v1/agents"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
}

// docs/threats.md K.96: an anonymous read costs by the results it asks for,
// one unit per 20: with a burst of 10, two pages of 100 (5 units each)
// empty the bucket, ten default pages do too; a refused page size costs
// one unit and answers 400.
func TestReadsChargeByPageSize(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) {
		c.Limits.ReadPerAddress = ratelimit.Rate{N: 5, Per: time.Second, Burst: 10}
	})
	for range 2 {
		h.do(req{method: "GET", path: "/api/v1/agents?pageSize=100"}).expectStatus(t, http.StatusOK)
	}
	h.do(req{method: "GET", path: "/api/v1/agents?pageSize=1"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	// A second later the bucket holds 5 units: one page of 100, or five
	// pages of 20 (sizes 21 to 40 cost two).
	h.clock.Advance(time.Second)
	h.do(req{method: "GET", path: "/api/v1/agents?pageSize=40"}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/api/v1/agents?pageSize=41"}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/api/v1/agents?pageSize=100"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	h.clock.Advance(2 * time.Second)
	for range 10 {
		h.do(req{method: "GET", path: "/api/v1/agents?pageSize=0"}).expectProblem(t, http.StatusBadRequest, "validation-failed")
	}
	h.do(req{method: "GET", path: "/api/v1/agents"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
}

// docs/api.md, docs/threats.md A.8: anonymous submissions are limited per
// client address; tokens are not.
func TestSubmitRatePerAddress(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) { c.Limits = ratelimit.DefaultLimits() })
	for i := range 10 {
		h.submit(fmt.Sprintf("https://agent-%d.example.org/", i), "")
	}
	r := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://agent-10.example.org/"}`)})
	r.expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	if r.header.Get("Retry-After") != "6" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Refused submissions store nothing.
	admin := h.token(registry.RoleAdmin)
	if p := listAll(t, h, admin); p.TotalSize != 10 {
		t.Fatalf("%d agents stored", p.TotalSize)
	}
	h.submit("https://agent-10.example.org/", admin)
	h.clock.Advance(6 * time.Second)
	h.submit("https://agent-11.example.org/", "")
}

// docs/threats.md A.8: thousands of subdomains of one victim are cut off per
// registrable domain, whichever addresses they come from.
func TestSubmitRatePerDomain(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) {
		c.Limits.SubmitPerDomain = ratelimit.Rate{N: 3, Per: time.Hour}
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	for i := range 3 {
		h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(fmt.Sprintf(`{"cardUrl":"https://s%d.victim.co.uk/"}`, i)),
			header: []string{"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i)}}).expectStatus(t, http.StatusAccepted)
	}
	r := h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://s9.VICTIM.co.uk/"}`),
		header: []string{"X-Forwarded-For", "198.51.100.77"}})
	r.expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	if r.header.Get("Retry-After") != "1200" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Another registrable domain is unaffected.
	h.do(req{method: "POST", path: "/api/v1/agents", body: jsonBody(`{"cardUrl":"https://s0.other.co.uk/"}`)}).expectStatus(t, http.StatusAccepted)
}
