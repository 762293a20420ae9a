package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// limitReads applies --read-rate to anonymous reads (docs/threats.md I.82).
// It runs after authenticate: a valid token is never limited.
func (s *server) limitReads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		m := c.Request().Method
		if (m == http.MethodGet || m == http.MethodHead) && principal(c).Role == "" {
			if ok, wait := s.limits.Read(s.clientKey(c.Request()), s.now()); !ok {
				return rateLimited(wait, "too many requests from this address")
			}
		}
		return next(c)
	}
}

// limitSubmission applies --submit-rate to an anonymous submission
// (ratelimit.Limiters.Submit: per client address, then per registrable
// domain of the submitted host; docs/threats.md A.8).
func (s *server) limitSubmission(c echo.Context, cardURL string) error {
	if principal(c).Role != "" {
		return nil
	}
	if r := s.limits.Submit(s.clientKey(c.Request()), cardURL, s.now()); r != nil {
		return rateLimited(r.Wait, r.Detail)
	}
	return nil
}

// catalogBudget is what a catalog submission by c's caller spends
// (docs/threats.md K.97): nothing for an admin token; for anyone else, an
// anonymous client or a claim's publisher token alike, one unit per agent
// registered of its own bucket and of the catalog's registrable domain's
// (ratelimit.AgentBudget). Refused before the fetch: 429.
func (s *server) catalogBudget(c echo.Context, catalogURL string) registry.CatalogBudget {
	p := principal(c)
	if p.Role == registry.RoleAdmin {
		return registry.CatalogBudget{}
	}
	who := s.clientKey(c.Request())
	if p.TokenID != "" {
		who = "token:" + p.TokenID
	}
	b := s.limits.Agents(who, catalogURL)
	return registry.CatalogBudget{
		Admit: func() error {
			if r := b.Admit(s.now()); r != nil {
				return rateLimited(r.Wait, r.Detail)
			}
			return nil
		},
		Spend: func(n int) (int, string) {
			got, r := b.Spend(n, s.now())
			if r != nil {
				return got, r.Detail
			}
			return got, ""
		},
	}
}

// clientKey is the rate-limit key of r's client (shared with the web UI).
func (s *server) clientKey(r *http.Request) string {
	return ratelimit.ClientKey(r, s.proxies)
}

func rateLimited(wait time.Duration, detail string) *problem {
	p := newProblem("rate-limited", detail)
	p.retryAfter = ratelimit.RetryAfter(wait)
	return p
}
