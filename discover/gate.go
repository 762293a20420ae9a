package discover

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// Gate turns an HTTP request into a caller the way the REST API does: no
// Authorization header is the anonymous caller, whose reads spend the same
// per-address budget as the API's; a bearer token maps to its Cardex role;
// failed tokens are counted per address so guessing is slowed down.
type Gate struct {
	// Authenticate resolves a bearer token (registry.Service.Authenticate);
	// registry.ErrUnauthorized means the token is not valid.
	Authenticate func(ctx context.Context, token string) (registry.Principal, error)
	// ClientKey is the rate-limit key of the request's client (its address
	// behind the trusted proxies).
	ClientKey func(r *http.Request) string
	// Read spends one anonymous read of the client key; nil allows all.
	Read func(key string, now time.Time) (ok bool, wait time.Duration)
	// AuthFailed records a failed token of the client key and reports
	// whether the key is over its budget (answer 429, not 401); nil
	// counts nothing.
	AuthFailed func(key, token string, now time.Time) (limited bool, wait time.Duration)
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
)

// Caller is the principal of r, or why r is refused. err is a storage
// failure while checking a token.
func (g *Gate) Caller(r *http.Request) (registry.Principal, *Refusal, error) {
	q := r.URL.Query()
	if q.Has("token") || q.Has("access_token") {
		return registry.Anonymous, &Refusal{Status: http.StatusUnauthorized, Message: msgTokenInURL}, nil
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	key := "unknown"
	if g.ClientKey != nil {
		key = g.ClientKey(r)
	}
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		if g.Read != nil {
			if ok, wait := g.Read(key, now()); !ok {
				return registry.Anonymous, &Refusal{Status: http.StatusTooManyRequests, Wait: wait, Message: msgRateLimited}, nil
			}
		}
		return registry.Anonymous, nil, nil
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	token = strings.TrimSpace(token)
	if len(values) == 1 && ok && strings.EqualFold(scheme, "Bearer") && token != "" && g.Authenticate != nil {
		p, err := g.Authenticate(r.Context(), token)
		if err == nil {
			return p, nil, nil
		}
		if !errors.Is(err, registry.ErrUnauthorized) {
			return registry.Anonymous, nil, err
		}
	}
	if g.AuthFailed != nil {
		if limited, wait := g.AuthFailed(key, token, now()); limited {
			return registry.Anonymous, &Refusal{Status: http.StatusTooManyRequests, Wait: wait, Message: "too many failed authentications from this address"}, nil
		}
	}
	return registry.Anonymous, &Refusal{Status: http.StatusUnauthorized, Message: msgUnauthorized}, nil
}

// RetryAfter is Wait in whole seconds, at least one (RFC 9110 §10.2.3).
func (r *Refusal) RetryAfter() int {
	s := int((r.Wait + time.Second - 1) / time.Second)
	return max(1, s)
}
