package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/search"
)

// limitReads applies --read-rate to anonymous reads (docs/threats.md I.82).
// It runs after authenticate: a valid token is never limited. A read
// costs by the results it asks for (readCost, K.96).
func (s *server) limitReads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		m := c.Request().Method
		if (m == http.MethodGet || m == http.MethodHead) && principal(c).Role == "" {
			if ok, wait := s.limits.ReadN(s.clientKey(c.Request()), readCost(c), s.now()); !ok {
				return rateLimited(wait, "too many requests from this address")
			}
		}
		return next(c)
	}
}

// readCost is what an anonymous read spends of the read budget: one unit
// per ratelimit.ResultsPerRead results of the page it asks for (pageSize,
// read as the page-size rule reads it; a size the rule refuses costs one
// unit and answers 400).
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

// clientKey is the rate-limit key of r's client (shared with the web UI).
func (s *server) clientKey(r *http.Request) string {
	return ratelimit.ClientKey(r, s.proxies)
}

func rateLimited(wait time.Duration, detail string) *problem {
	p := newProblem("rate-limited", detail)
	p.retryAfter = ratelimit.RetryAfter(wait)
	return p
}
