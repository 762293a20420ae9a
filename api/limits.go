package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// limitReads applies --read-rate to reads (docs/threats.md I.82): an
// anonymous caller spends its address's budget, a reader or publisher
// token a budget of its own (docs/security.md "Budgets per token kind").
// It runs after authenticate; admin tokens are never limited. A read
// costs by the results it asks for (readCost, K.96).
func (s *server) limitReads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		m := c.Request().Method
		// ARD's search and explore are reads sent as POST: they spend
		// one unit here and the rest of their page's cost when their
		// body is read (ardCharge).
		if m != http.MethodGet && m != http.MethodHead && !(m == http.MethodPost && isARD(c)) {
			return next(c)
		}
		key, detail, limited := s.readKey(c)
		if !limited {
			return next(c)
		}
		if ok, wait := s.limits.ReadN(key, readCost(c), s.now()); !ok {
			return rateLimited(wait, detail)
		}
		return next(c)
	}
}

// readKey is the read budget the caller spends: its address's when
// anonymous, its token's for a reader or publisher; limited is false for
// an admin token, which is never limited.
func (s *server) readKey(c echo.Context) (key, detail string, limited bool) {
	p := principal(c)
	switch p.Role {
	case registry.RoleAdmin:
		return "", "", false
	case registry.RoleReader, registry.RolePublisher:
		return ratelimit.TokenKey(p.TokenID), "too many requests with this token", true
	}
	return s.clientKey(c.Request()), "too many requests from this address", true
}

// readCost is what a read spends of the read budget: one unit per
// ratelimit.ResultsPerRead results of the page it asks for (pageSize, read
// as the page-size rule reads it; a size the rule refuses costs one unit
// and answers 400).
func readCost(c echo.Context) int {
	vals := c.QueryParams()["pageSize"]
	if len(vals) != 1 {
		return 1
	}
	n, err := strconv.Atoi(vals[0])
	if err != nil {
		return 1
	}
	size, err := search.PageSize(&n)
	if err != nil {
		return 1
	}
	return ratelimit.ReadCost(size)
}

// limitSubmission spends one submission of cardURL (docs/security.md
// "Budgets per token kind"): an admin token is not limited; a publisher
// token spends its own budget (--publisher-submit-rate); an anonymous
// caller and a reader token spend --submit-rate, per client address, then
// per registrable domain of the submitted host (docs/threats.md A.8).
func (s *server) limitSubmission(c echo.Context, cardURL string) error {
	p := principal(c)
	switch p.Role {
	case registry.RoleAdmin:
		return nil
	case registry.RolePublisher:
		return s.limitToken(p)
	}
	if r := s.limits.Submit(s.clientKey(c.Request()), cardURL, s.now()); r != nil {
		return rateLimited(r.Wait, r.Detail)
	}
	return nil
}

// catalogBudget is what a catalog submission by c's caller spends
// (docs/threats.md K.97): nothing for an admin token; for anyone else, an
// anonymous client or a token alike, one unit per agent registered of its
// own bucket (an address's, or a publisher token's) and of the catalog's
// registrable domain's
// (ratelimit.AgentBudget). Refused before the fetch: 429.
func (s *server) catalogBudget(c echo.Context, catalogURL string) registry.CatalogBudget {
	p := principal(c)
	if p.Role == registry.RoleAdmin {
		return registry.CatalogBudget{}
	}
	b := s.limits.Agents(s.clientKey(c.Request()), catalogURL)
	if p.Role == registry.RolePublisher {
		// A publisher token spends its own budget, never its address's; a
		// reader token writes on its address's (docs/security.md "Budgets
		// per token kind").
		b = s.limits.TokenAgents(p.TokenID, catalogURL)
	}
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

// limitToken spends one unit of a publisher token's own budget.
func (s *server) limitToken(p registry.Principal) error {
	if r := s.limits.SubmitToken(p.TokenID, 1, s.now()); r != nil {
		return rateLimited(r.Wait, r.Detail)
	}
	return nil
}

// limitClaim spends what a host claim or one of its verifications costs
// (docs/claims.md "Who can stop a claim"): never a budget other clients
// share. An admin is not limited; a publisher token spends its own
// budget; anyone else spends the per-address submission budget only, never
// the per-domain one that others could exhaust against the host's owner.
// It returns the claim's requester (registry.ClaimRequest.Requester).
func (s *server) limitClaim(c echo.Context, what string) (requester string, err error) {
	p := principal(c)
	switch p.Role {
	case registry.RoleAdmin:
		return "", nil
	case registry.RolePublisher:
		return registry.RequesterToken(p.TokenID), s.limitToken(p)
	}
	key := s.clientKey(c.Request())
	if ok, wait := s.limits.SubmitAddr(key, s.now()); !ok {
		return "", rateLimited(wait, "too many "+what+" from this address")
	}
	return key, nil
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
