package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// docs/threats.md I.78: missing, forged, expired and revoked credentials.
func TestAuthentication(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		// No token: anonymous, allowed to list.
		h.do(req{method: "GET", path: "/api/v1/agents"}).expectStatus(t, http.StatusOK)
		h.do(req{method: "GET", path: "/api/v1/audit", token: admin}).expectStatus(t, http.StatusOK)

		soon := h.svcClock.Now().Add(time.Hour)
		expired, _, err := h.svc.CreateToken(h.ctx(), registry.TokenRequest{Role: registry.RoleAdmin, Name: "expired", ExpiresAt: &soon})
		if err != nil {
			t.Fatal(err)
		}
		revoked, tok, err := h.svc.CreateToken(h.ctx(), registry.TokenRequest{Role: registry.RoleAdmin, Name: "revoked"})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.svc.RevokeToken(h.ctx(), tok.ID); err != nil {
			t.Fatal(err)
		}
		h.do(req{method: "GET", path: "/api/v1/audit", token: expired}).expectStatus(t, http.StatusOK)
		h.svcClock.Advance(2 * time.Hour)
		forged := admin[:len(admin)-4] + "AAAA"
		var details []string
		for name, header := range map[string]string{
			"forged":       "Bearer " + forged,
			"expired":      "Bearer " + expired,
			"revoked":      "Bearer " + revoked,
			"garbage":      "Bearer not-a-token",
			"basic scheme": "Basic YWRtaW46YWRtaW4=",
			"empty bearer": "Bearer ",
			"scheme only":  "Bearer",
		} {
			r := h.do(req{method: "GET", path: "/api/v1/audit", header: []string{"Authorization", header}})
			p := r.expectProblem(t, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: WWW-Authenticate %q", name, r.header.Get("WWW-Authenticate"))
			}
			details = append(details, p.Detail)
		}
		// One generic message, whatever was wrong.
		for _, d := range details {
			if d != genericUnauthorized {
				t.Fatalf("detail %q, want the generic %q", d, genericUnauthorized)
			}
		}
		// A token in the query string is refused, even a valid one.
		for _, q := range []string{"token", "access_token"} {
			h.do(req{method: "GET", path: "/api/v1/agents?" + q + "=" + admin}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		}
		// Tokens never reach the logs (the access log names route templates).
		logs := h.logs.String()
		_, secret, _ := strings.Cut(strings.TrimPrefix(admin, "cdx_"), "_")
		for _, s := range []string{admin, secret, forged, expired, revoked} {
			if strings.Contains(logs, s) {
				t.Fatalf("a token appears in the logs:\n%s", logs)
			}
		}
		if !strings.Contains(logs, "route=/api/v1/agents") {
			t.Fatalf("access log lacks the route template:\n%s", logs)
		}
	})
}

// docs/threats.md I.78: guessing tokens from one address is cut off with 429;
// a valid token from another address is unaffected.
func TestAuthenticationBruteForceIsLimited(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) {
		c.Limits.AuthFailures = ratelimit.Rate{N: 5, Per: time.Minute}
	})
	for i := range 5 {
		h.do(req{method: "GET", path: "/api/v1/agents", token: "cdx_guess" + strings.Repeat("x", i)}).
			expectProblem(t, http.StatusUnauthorized, "unauthorized")
	}
	r := h.do(req{method: "GET", path: "/api/v1/agents", token: "cdx_guess-again"})
	r.expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	if r.header.Get("Retry-After") != "12" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Anonymous requests are not authentication attempts.
	h.do(req{method: "GET", path: "/api/v1/agents"}).expectStatus(t, http.StatusOK)
	h.clock.Advance(12 * time.Second)
	h.do(req{method: "GET", path: "/api/v1/agents", token: h.token(registry.RoleReader)}).expectStatus(t, http.StatusOK)
}

// A guessing run from the admin's own address (everybody shares one behind
// a proxy without --trusted-proxies) does not lock the valid admin out: the
// guesses get 429, a correct token is still accepted, and a token that just
// failed is refused without being looked up again.
func TestAuthenticationFailuresNeverBlockAValidToken(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) {
		c.Limits.AuthFailures = ratelimit.Rate{N: 10, Per: time.Minute}
	})
	admin := h.token(registry.RoleAdmin)
	for i := range 12 {
		want := http.StatusUnauthorized
		if i >= 10 {
			want = http.StatusTooManyRequests
		}
		if r := h.do(req{method: "GET", path: "/api/v1/audit", token: fmt.Sprintf("cdx_guess%d", i)}); r.status != want {
			t.Fatalf("guess %d: %d, want %d", i, r.status, want)
		}
	}
	h.do(req{method: "GET", path: "/api/v1/audit", token: admin}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/api/v1/audit", token: "cdx_guess3"}).expectProblem(t, http.StatusTooManyRequests, "rate-limited")
	h.do(req{method: "GET", path: "/api/v1/audit", header: []string{"Authorization", "Basic eA=="}}).
		expectProblem(t, http.StatusTooManyRequests, "rate-limited")
}

// docs/threats.md I.79: a publisher token is scoped to its hosts and never
// curates.
func TestPublisherScope(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		mine := h.submit("https://mine.example.com/", "")
		theirs := h.submit("https://theirs.example.com/", "")
		pub := h.token(registry.RolePublisher, "mine.example.com")

		h.do(req{method: "POST", path: "/api/v1/agents/" + mine.ID + "/crawl", token: pub, body: jsonBody(`{}`)}).
			expectStatus(t, http.StatusAccepted)
		h.do(req{method: "GET", path: "/api/v1/agents/" + mine.ID + "/fetches", token: pub}).expectStatus(t, http.StatusOK)

		h.do(req{method: "POST", path: "/api/v1/agents/" + theirs.ID + "/crawl", token: pub}).expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "GET", path: "/api/v1/agents/" + theirs.ID + "/fetches", token: pub}).expectProblem(t, http.StatusForbidden, "forbidden")
		for _, action := range []string{"approve", "reject", "suspend", "restore"} {
			h.do(req{method: "POST", path: "/api/v1/agents/" + mine.ID + "/" + action, token: pub, body: jsonBody(`{"versionSeq":0}`)}).
				expectProblem(t, http.StatusForbidden, "forbidden")
		}
		h.do(req{method: "DELETE", path: "/api/v1/agents/" + theirs.ID, token: pub}).expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "PATCH", path: "/api/v1/agents/" + mine.ID, token: pub, body: jsonBody(`{"visibility":"internal"}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "PUT", path: "/api/v1/agents/" + mine.ID + "/keys", token: pub, body: jsonBody(`{"keys":[]}`)}).
			expectProblem(t, http.StatusForbidden, "forbidden")
		h.do(req{method: "GET", path: "/api/v1/audit", token: pub}).expectProblem(t, http.StatusForbidden, "forbidden")
		// Withdrawing its own agent is the one removal a publisher may do
		// (docs/claims.md).
		h.do(req{method: "DELETE", path: "/api/v1/agents/" + mine.ID, token: pub}).expectStatus(t, http.StatusOK)
		// Anonymous callers neither.
		h.do(req{method: "POST", path: "/api/v1/agents/" + mine.ID + "/crawl"}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
		h.do(req{method: "GET", path: "/api/v1/audit"}).expectProblem(t, http.StatusUnauthorized, "unauthorized")
	})
}

// Authentication and authorization come before the request is read: an
// anonymous curation with an empty or malformed body is 401, a reader's is
// 403, never 400 (which would tell a caller without rights how to shape
// its request).
func TestAuthorizeBeforeValidate(t *testing.T) {
	h := newHarness(t, registrytest.SQLite(t))
	a := h.submit("https://guarded.example.com/", "")
	reader := h.token(registry.RoleReader)
	path := "/api/v1/agents/" + a.ID
	for _, r := range []req{
		{method: "POST", path: path + "/approve"},
		{method: "POST", path: path + "/approve", body: jsonBody(`{"versionSeq":"x"}`)},
		{method: "POST", path: path + "/reject", body: jsonBody(`not json`)},
		{method: "PATCH", path: path, body: jsonBody(`{"visibility":"hidden"}`)},
		{method: "PUT", path: path + "/keys", body: jsonBody(`{}`)},
		{method: "DELETE", path: path, body: jsonBody(`{"why":1}`)},
		{method: "POST", path: path + "/crawl", body: jsonBody(`{"now":true}`)},
		{method: "GET", path: "/api/v1/audit?limit=x"},
		{method: "POST", path: "/api/v1/admin/reindex", body: jsonBody(`[`)},
	} {
		res := h.do(r)
		res.expectProblem(t, http.StatusUnauthorized, "unauthorized")
		if got := res.header.Get("WWW-Authenticate"); got != `Bearer realm="cardex"` {
			t.Errorf("%s %s: WWW-Authenticate %q", r.method, r.path, got)
		}
		r.token = reader
		if r.body != nil {
			r.body = jsonBody(`{}`)
		}
		h.do(r).expectProblem(t, http.StatusForbidden, "forbidden")
	}
}
