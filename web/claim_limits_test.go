package web_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/web"
)

// docs/threats.md K.101 through the claim form: other visitors' claims on a
// host spend their own budgets and caps, never one the owner needs (they
// once spent the per-domain budget, so a few visitors locked the owner
// out); one visitor past its cap of unverified claims on the host gets 429
// with Retry-After until the oldest expires.
func TestClaimFormOwnerIsNeverLockedOut(t *testing.T) {
	e := newEnv(t, func(c *web.Config) {
		c.Limits = ratelimit.Limits{SubmitPerAddress: ratelimit.Rate{N: 100, Per: time.Minute}, SubmitPerDomain: ratelimit.Rate{N: 3, Per: time.Hour}}
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	claim := func(addr string) response {
		t.Helper()
		return e.do("POST", "/claims", url.Values{"host": {"agent.example.com"}}, map[string]string{"Origin": e.srv.URL, "X-Forwarded-For": addr})
	}
	for i := range 4 {
		for range 3 {
			if r := claim(fmt.Sprintf("198.51.100.%d", i+1)); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("visitor %d: %d", i, r.StatusCode)
			}
		}
	}
	r := claim("198.51.100.1")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "3600" {
		t.Fatalf("a fourth unverified claim: %d, Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
	r = claim("203.0.113.9")
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/claims/") {
		t.Fatalf("the owner's claim: %d", r.StatusCode)
	}
}
