package api

import (
	"errors"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// genericUnauthorized is the one message for every credential failure, so a
// prober learns nothing about which tokens exist (docs/threats.md I.78).
const genericUnauthorized = "the credentials are not valid"

func principal(c echo.Context) registry.Principal {
	p, _ := c.Get(keyPrincipal).(registry.Principal)
	return p
}

func roleName(r registry.Role) string {
	if r == "" {
		return "anonymous"
	}
	return string(r)
}

// authenticate resolves Authorization: Bearer into a principal. No header
// is the anonymous caller. A token in the query string is refused outright:
// URLs end up in proxy logs, browser history and Referer headers (I.78).
// Failed attempts are counted per client address (ratelimit.Guard): past
// the budget a failure answers 429 and a credential that cannot succeed is
// refused unchecked, but a correct token always works, so a guessing run
// behind a shared proxy address never locks the admin out.
func (s *server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		q := r.URL.Query()
		if q.Has("token") || q.Has("access_token") {
			p := newProblem("unauthorized", "credentials are not accepted in the URL; send Authorization: Bearer <token>")
			p.authError = "invalid_request"
			return p
		}
		values := r.Header.Values(echo.HeaderAuthorization)
		if len(values) == 0 {
			c.Set(keyPrincipal, registry.Anonymous)
			return next(c)
		}
		addr := s.clientKey(r)
		now := s.now()
		scheme, token, ok := strings.Cut(values[0], " ")
		token = strings.TrimSpace(token)
		wellFormed := len(values) == 1 && ok && strings.EqualFold(scheme, "Bearer") && token != ""
		guard := s.limits.Auth()
		if refuse, wait := guard.Before(addr, token, wellFormed, now); refuse {
			return rateLimited(wait, "too many failed authentications from this address")
		}
		if !wellFormed {
			return s.authFailed(guard, addr, token, now)
		}
		authenticate := s.svc.Authenticate
		if s.bearer != nil && identity.LooksLikeJWT(token) {
			authenticate = s.bearer
		}
		p, err := authenticate(r.Context(), token)
		var te *identity.TokenError
		if errors.As(err, &te) {
			if limited, wait := guard.Failed(addr, token, now); limited {
				return rateLimited(wait, "too many failed authentications from this address")
			}
			return err // the reason class (docs/errors.md "Bearer JWTs")
		}
		if errors.Is(err, registry.ErrUnauthorized) {
			return s.authFailed(guard, addr, token, now)
		}
		if err != nil {
			return err
		}
		c.Set(keyPrincipal, p)
		return next(c)
	}
}

func (s *server) authFailed(guard *ratelimit.Guard, addr, token string, now time.Time) error {
	if limited, wait := guard.Failed(addr, token, now); limited {
		return rateLimited(wait, "too many failed authentications from this address")
	}
	p := newProblem("unauthorized", genericUnauthorized)
	p.authError = "invalid_token"
	return p
}

// needs refuses a caller who may not call the route at all, before the
// handler reads anything (registry.Authorize). A missing token is 401 with
// a plain Bearer challenge; a token of another role is 403.
func (s *server) needs(n registry.Need) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := registry.Authorize(principal(c), n)
			if errors.Is(err, registry.ErrUnauthorized) {
				return newProblem("unauthorized", "this operation needs a token: send Authorization: Bearer <token>")
			}
			if err != nil {
				return err
			}
			return next(c)
		}
	}
}
