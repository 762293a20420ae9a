package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// rateLimited is a refusal by a rate limit; it is errRateLimited, and says
// how long to wait.
type rateLimited struct{ wait time.Duration }

func (e rateLimited) Error() string        { return errRateLimited.Error() }
func (e rateLimited) Is(target error) bool { return target == errRateLimited }

// retryAfter is the Retry-After of a rate-limit error, 0 when it has none.
func retryAfter(err error) int {
	var rl rateLimited
	var re *registry.RetryError
	switch {
	case errors.As(err, &rl):
		return ratelimit.RetryAfter(rl.wait)
	case errors.As(err, &re):
		return ratelimit.RetryAfter(re.Wait)
	}
	return 0
}

// clientKey is the rate-limit key of r's client, the same the API uses
// (ratelimit.ClientKey).
func (u *ui) clientKey(r *http.Request) string {
	return ratelimit.ClientKey(r, u.cfg.TrustedProxies)
}

// limitReads applies the API's anonymous read limit (--read-rate) to the
// pages, sharing its buckets: the catalogue, a search, the tags and the
// agent pages cost the server what an API read costs. Static files and
// signed-in admins are not limited; a reader or publisher the identity
// provider signed in reads on a budget of their own, as with a token
// (docs/security.md "Budgets per token kind").
func (u *ui) limitReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && p.Role != registry.RoleAdmin &&
			!strings.HasPrefix(r.URL.Path, "/static/") {
			key := u.clientKey(r)
			if p.Role != "" {
				key = ratelimit.TokenKey(p.TokenID)
			}
			if ok, wait := u.limits.Read(key, u.cfg.Now()); !ok {
				u.fail(w, r, rateLimited{wait})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
