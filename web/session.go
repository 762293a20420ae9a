package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/cardexhq/cardex/registry"
)

// sessionCookie holds an admin's API token. The __Host- prefix makes the
// browser refuse it unless it is Secure, has Path=/ and no Domain, so no
// sibling host can plant or read it; browsers treat loopback as secure, so
// it works there without TLS (CONTRACT.md §8). Keeping the token itself
// means any replica validates the session against the shared token store,
// and revoking the token ends the session.
const sessionCookie = "__Host-cardex_session"

type ctxKey struct{}

// session resolves the session cookie once per request. Only admin tokens
// make a session; anything else is an anonymous visitor.
func (u *ui) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := registry.Anonymous
		if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			got, err := u.svc.Authenticate(r.Context(), c.Value)
			switch {
			case err == nil && got.Role == registry.RoleAdmin:
				p = got
			case err == nil || errors.Is(err, registry.ErrUnauthorized):
				clearSession(w) // revoked, expired or demoted: forget it
			default:
				u.fail(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, p)))
	})
}

func principal(r *http.Request) registry.Principal {
	p, _ := r.Context().Value(ctxKey{}).(registry.Principal)
	return p
}

func isAdmin(r *http.Request) bool { return principal(r).Role == registry.RoleAdmin }

// admin guards the admin pages: without a session they show the login
// form (GET) or refuse (POST).
func (u *ui) admin(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "no-store")
		if !isAdmin(r) {
			if r.Method == http.MethodGet {
				return u.loginPage(w, r, http.StatusUnauthorized, "")
			}
			return registry.ErrUnauthorized
		}
		return h(w, r)
	}
}

func setSession(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/",
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

func clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}
