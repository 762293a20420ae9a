package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/cardexhq/cardex/registry"
)

// sessionCookie holds the secret of a server-side admin session
// (registry.StartSession), never the API token: signing out, revoking the
// token, idling and the absolute limit all end it on the server, and every
// replica sees the same sessions (docs/security.md "Admin sessions"). The
// __Host- prefix makes the browser refuse it unless it is Secure, has
// Path=/ and no Domain, so no sibling host can plant or read it; browsers
// treat loopback as secure, so it works there without TLS.
const sessionCookie = "__Host-cardex_session"

type ctxKey struct{}

// session resolves the session cookie once per request: an admin token's
// session, or a person's of any role the identity provider signed in
// (docs/identity.md); without one the visitor is anonymous.
func (u *ui) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := registry.Anonymous
		if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			got, err := u.svc.Session(r.Context(), c.Value)
			switch {
			case err == nil:
				p = got
			case errors.Is(err, registry.ErrUnauthorized):
				clearSession(w) // ended, idle, too old, or its token revoked: forget it
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
				return u.loginPage(w, r, http.StatusUnauthorized, notAdmin(r))
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

// cookieDropped reports whether the browser will drop the Secure session
// cookie: the page came over plain HTTP to a host that is not loopback
// (browsers treat loopback as a secure context), with no sign that a
// trusted proxy terminated TLS. Signing in would then fail silently, so the
// sign-in page says so.
func (u *ui) cookieDropped(r *http.Request) bool {
	if r.TLS != nil || strings.HasPrefix(u.cfg.BaseURL, "https://") {
		return false
	}
	if peer, ok := peerAddr(r); ok && slices.ContainsFunc(u.cfg.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(peer) }) &&
		strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(strings.TrimSuffix(strings.ToLower(host), "."), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		return false
	}
	return true
}

func peerAddr(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}
