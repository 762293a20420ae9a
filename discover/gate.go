package discover

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// Gate turns an HTTP request into a caller the way the REST API does: no
// Authorization header is the anonymous caller, whose requests spend the
// same per-address read budget as the API's and the UI's (one
// ratelimit.Limiters for every face); a bearer token maps to its Cardex
// role and, unless it is an admin's, spends its own read budget; failed
// tokens go through the same failure guard.
type Gate struct {
	// Authenticate resolves a bearer token (registry.Service.Authenticate);
	// registry.ErrUnauthorized means the token is not valid.
	Authenticate func(ctx context.Context, token string) (registry.Principal, error)
	// Bearer, when set, resolves a bearer JWT from the identity provider
	// (identity.Provider.Bearer) instead of Authenticate; a refusal names
	// its reason class (docs/errors.md "Bearer JWTs").
	Bearer func(ctx context.Context, token string) (registry.Principal, error)
	// Limits are the server's shared buckets; nil allows everything.
	Limits *ratelimit.Limiters
	// TrustedProxies decide the client address (ratelimit.ClientKey).
	TrustedProxies []netip.Prefix
	// Now is the clock of the limits; nil is time.Now.
	Now func() time.Time
}

// Refusal is why a request gets no answer: Unauthorized (HTTP 401) or
// RateLimited (HTTP 429, retry after Wait).
type Refusal struct {
	Status  int
	Wait    time.Duration
	Message string
}

// Refusal messages: one for every credential failure, so a prober learns
// nothing about which tokens exist.
const (
	msgUnauthorized = "the credentials are not valid"
	msgTokenInURL   = "credentials are not accepted in the URL; send Authorization: Bearer <token>"
	msgRateLimited  = "too many requests from this address; retry later or use a token"
	msgAuthLimited  = "too many failed authentications from this address"
	msgTokenLimited = "too many requests with this token; retry later"
)

// Caller is the principal of r, or why r is refused. err is a storage
// failure while checking a token, or the identity provider unavailable
// while checking a JWT (identity.ErrProvider).
func (g *Gate) Caller(r *http.Request) (registry.Principal, *Refusal, error) {
	q := r.URL.Query()
	if q.Has("token") || q.Has("access_token") {
		return registry.Anonymous, &Refusal{Status: http.StatusUnauthorized, Message: msgTokenInURL}, nil
	}
	now := time.Now()
	if g.Now != nil {
		now = g.Now()
	}
	key := ratelimit.ClientKey(r, g.TrustedProxies)
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		if ok, wait := g.Limits.Read(key, now); !ok {
			return registry.Anonymous, &Refusal{Status: http.StatusTooManyRequests, Wait: wait, Message: msgRateLimited}, nil
		}
		return registry.Anonymous, nil, nil
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	token = strings.TrimSpace(token)
	wellFormed := len(values) == 1 && ok && strings.EqualFold(scheme, "Bearer") && token != ""
	guard := g.Limits.Auth()
	if refuse, wait := guard.Before(key, token, wellFormed, now); refuse {
		return registry.Anonymous, &Refusal{Status: http.StatusTooManyRequests, Wait: wait, Message: msgAuthLimited}, nil
	}
	authenticate := g.Authenticate
	if g.Bearer != nil && identity.LooksLikeJWT(token) {
		authenticate = g.Bearer
	}
	message := msgUnauthorized
	if wellFormed && authenticate != nil {
		p, err := authenticate(r.Context(), token)
		if err == nil {
			// Only admin tokens are unlimited; any other token reads on a
			// budget of its own (docs/security.md "Budgets per token kind").
			if p.Role != registry.RoleAdmin {
				if ok, wait := g.Limits.Read(ratelimit.TokenKey(p.TokenID), now); !ok {
					return p, &Refusal{Status: http.StatusTooManyRequests, Wait: wait, Message: msgTokenLimited}, nil
				}
			}
			return p, nil, nil
		}
		var te *identity.TokenError
		switch {
		case errors.As(err, &te):
			message = "the bearer JWT was refused: " + te.Reason
		case !errors.Is(err, registry.ErrUnauthorized):
			return registry.Anonymous, nil, err
		}
	}
	if limited, wait := guard.Failed(key, token, now); limited {
		return registry.Anonymous, &Refusal{Status: http.StatusTooManyRequests, Wait: wait, Message: msgAuthLimited}, nil
	}
	return registry.Anonymous, &Refusal{Status: http.StatusUnauthorized, Message: message}, nil
}

// ErrRateLimited is a search whose cost by page size is over what is
// left of the caller's read budget (WithReadBudget).
var ErrRateLimited = errors.New("too many requests from this address; retry later, ask for smaller pages or use a token")

type budgetKey struct{}

// WithReadBudget returns ctx carrying the read budget of r's client (an
// anonymous caller's address, or a non-admin token's own): Caller spent one unit for the request, and a search
// that asks for more than ratelimit.ResultsPerRead results spends the rest
// of its cost (ratelimit.ReadCost) from it, as on the API (docs/security.md
// "Rate limits", docs/threats.md K.96).
func (g *Gate) WithReadBudget(ctx context.Context, r *http.Request, caller registry.Principal) context.Context {
	if caller.Role == registry.RoleAdmin || g.Limits == nil {
		return ctx
	}
	key := ratelimit.ClientKey(r, g.TrustedProxies)
	if caller.Role != "" {
		// A reader's or publisher's token reads on its own budget, as in
		// Caller (docs/security.md "Budgets per token kind").
		key = ratelimit.TokenKey(caller.TokenID)
	}
	return context.WithValue(ctx, budgetKey{}, func(n int) bool {
		now := time.Now()
		if g.Now != nil {
			now = g.Now()
		}
		ok, _ := g.Limits.ReadN(key, n, now)
		return ok
	})
}

// chargePage spends what a page of size results costs beyond the one unit
// the request spent already; ErrRateLimited when the budget is short.
func chargePage(ctx context.Context, size int) error {
	spend, ok := ctx.Value(budgetKey{}).(func(int) bool)
	if n := ratelimit.ReadCost(size) - 1; ok && n > 0 && !spend(n) {
		return ErrRateLimited
	}
	return nil
}

// RetryAfter is Wait in whole seconds, at least one (RFC 9110 §10.2.3).
func (r *Refusal) RetryAfter() int { return ratelimit.RetryAfter(r.Wait) }
