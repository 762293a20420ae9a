package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/registry"
)

// flowCookie carries the secret of a sign-in under way through the
// identity provider's redirect (docs/identity.md "Browser details"). The
// provider is another site, so it must be SameSite=Lax: a Strict cookie
// would not come back on the provider's redirect to the callback. It is
// scoped to the callback path, lives as long as a sign-in may take, and
// is good once: the callback deletes the server's row it names.
const flowCookie = "cardex_oidc_flow"

const flowPath = "/auth/oidc/"

func (u *ui) setFlow(w http.ResponseWriter, secret string) {
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: secret, Path: flowPath, MaxAge: int(registry.SignInTTL.Seconds()),
		Secure: strings.HasPrefix(u.cfg.BaseURL, "https://"), HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func (u *ui) clearFlow(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: "", Path: flowPath, MaxAge: -1,
		Secure: strings.HasPrefix(u.cfg.BaseURL, "https://"), HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// oidcLogin is GET /auth/oidc/login: a sign-in begins (its state, nonce
// and PKCE verifier kept on the server) and the browser goes to the
// provider. A link, not a form: the pages' CSP allows forms to submit to
// Cardex only (form-action 'self'), and a form's redirect to the provider
// would count as submitting there. Starting a sign-in changes nothing a
// visitor has; anonymous starts spend the read budget (limitReads).
func (u *ui) oidcLogin(w http.ResponseWriter, r *http.Request) error {
	if u.cfg.OIDC == nil {
		return errNotFound
	}
	w.Header().Set("Cache-Control", "no-store")
	f := identity.NewFlow()
	authURL, err := u.cfg.OIDC.AuthURL(r.Context(), f)
	if err != nil {
		return u.signInFailed(w, r, err)
	}
	secret, err := u.svc.BeginSignIn(r.Context(), registry.SignIn{State: f.State, Nonce: f.Nonce, Verifier: f.Verifier})
	if err != nil {
		return err
	}
	u.setFlow(w, secret)
	http.Redirect(w, r, authURL, http.StatusSeeOther)
	return nil
}

// oidcCallback is GET /auth/oidc/callback, where the provider sends the
// browser back. The sign-in the cookie names is taken (and so can never
// be finished twice), the state compared, the code exchanged and the ID
// token checked against the nonce; then the person gets the server-side
// session every sign-in gets.
func (u *ui) oidcCallback(w http.ResponseWriter, r *http.Request) error {
	if u.cfg.OIDC == nil {
		return errNotFound
	}
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	c, err := r.Cookie(flowCookie)
	u.clearFlow(w)
	if err != nil {
		return u.signInFailed(w, r, identity.ErrSignIn)
	}
	f, err := u.svc.TakeSignIn(r.Context(), c.Value)
	if errors.Is(err, registry.ErrUnauthorized) {
		return u.signInFailed(w, r, identity.ErrSignIn)
	}
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1 {
		return u.signInFailed(w, r, identity.ErrSignIn)
	}
	if q.Get("error") != "" {
		// The person cancelled, or the provider refused (OAuth 2.0 §4.1.2.1).
		return u.signInFailed(w, r, identity.ErrSignIn)
	}
	p, idToken, err := u.cfg.OIDC.Finish(r.Context(), q.Get("code"), identity.Flow{State: f.State, Nonce: f.Nonce, Verifier: f.Verifier})
	if err != nil {
		return u.signInFailed(w, r, err)
	}
	secret, err := u.svc.StartPersonSession(r.Context(), p, idToken)
	if err != nil {
		return err
	}
	setSession(w, secret)
	// A page, not a redirect: the session cookie is SameSite=Strict, and a
	// redirect would continue the navigation the provider's site started,
	// so the browser would leave the cookie off the first page. The page
	// moves on by itself, as a navigation of Cardex's own.
	to := "/"
	if p.Role == registry.RoleAdmin {
		to = "/admin"
	}
	u.moveOn(w, r, "Signed in", "signed-in-as", "Signed in as "+p.Name+".", to)
	return nil
}

// moveOn answers a page that sends the browser on to "to" by itself (a
// meta refresh, with a link for a browser that does not follow it): after
// the callback, so the next page is a navigation of Cardex's own; after
// signing out, so the form's answer does not redirect to the provider,
// which the pages' CSP (form-action 'self') would block.
func (u *ui) moveOn(w http.ResponseWriter, r *http.Request, heading, id, msg, to string) {
	u.render(w, r, http.StatusOK, "signed_in", heading, struct {
		Heading, ID, Message, To string
	}{heading, id, msg, to})
}

// signInFailed shows the sign-in page again with why, in words that give
// nothing away: a failure of the provider is logged.
func (u *ui) signInFailed(w http.ResponseWriter, r *http.Request, err error) error {
	msg := "Signing in with " + u.cfg.OIDC.Name() + " did not complete. Try again."
	switch {
	case errors.Is(err, identity.ErrProvider):
		u.log.WarnContext(r.Context(), "sign-in with the identity provider failed", "err", err)
		msg = u.cfg.OIDC.Name() + " cannot be reached right now. Try again later."
		return u.loginPage(w, r, http.StatusBadGateway, msg)
	case errors.Is(err, identity.ErrSignIn):
		u.log.InfoContext(r.Context(), "sign-in with the identity provider refused", "err", err)
	default:
		return err
	}
	return u.loginPage(w, r, http.StatusUnauthorized, msg)
}
