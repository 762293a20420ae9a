package web

import (
	"errors"
	"net/http"
	"slices"

	"github.com/cardexhq/cardex/registry"
)

// adminHome is GET /admin: the login form, or the review queue.
func (u *ui) adminHome(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	if !isAdmin(r) {
		return u.loginPage(w, r, http.StatusOK, notAdmin(r))
	}
	v, err := u.loadQueue(r)
	if err != nil {
		return err
	}
	u.render(w, r, http.StatusOK, "admin_queue", "Review queue", v)
	return nil
}

// notAdmin says why a person signed in with the identity provider sees
// the sign-in page again: their groups do not make them an admin.
func notAdmin(r *http.Request) string {
	if p := principal(r); p.Subject != "" {
		return "You are signed in as " + p.Name + ", who is not an administrator here. Administrators are the members of the groups the operator named."
	}
	return ""
}

func (u *ui) loginPage(w http.ResponseWriter, r *http.Request, status int, msg string) error {
	w.Header().Set("Cache-Control", "no-store")
	provider := ""
	if u.cfg.OIDC != nil {
		provider = u.cfg.OIDC.Name()
	}
	u.render(w, r, status, "admin_login", "Sign in", struct {
		Error     string
		PlainHTTP bool
		Provider  string
	}{msg, u.cookieDropped(r), provider})
	return nil
}

// login is POST /admin/login: an admin token in, a session cookie out.
// Every failure says the same thing (docs/threats.md I.78), and failures are
// counted per client address with the API's (ratelimit.Guard), so tokens
// cannot be guessed by volume while a correct token always signs in.
func (u *ui) login(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errBadRequest
	}
	key, token, now := u.clientKey(r), r.PostForm.Get("token"), u.cfg.Now()
	guard := u.limits.Auth()
	if refuse, wait := guard.Before(key, token, token != "", now); refuse {
		return rateLimited{wait}
	}
	p, err := u.svc.Authenticate(r.Context(), token)
	switch {
	case err == nil && p.Role == registry.RoleAdmin:
		secret, err := u.svc.StartSession(r.Context(), p)
		if err != nil {
			return err
		}
		setSession(w, secret)
		u.log.InfoContext(r.Context(), "admin signed in", "token_id", p.TokenID)
		return seeOther(w, r, "/admin")
	case err != nil && !errors.Is(err, registry.ErrUnauthorized):
		return err
	}
	if limited, wait := guard.Failed(key, token, now); limited {
		return rateLimited{wait}
	}
	return u.loginPage(w, r, http.StatusUnauthorized, "That is not a valid admin token.")
}

// logout is POST /admin/logout: the session ends on the server, so a copy
// of the cookie is worth nothing afterwards. A person the identity
// provider signed in goes on to the provider's end-session endpoint when
// it has one, which sends them back to {base-url}/ (docs/identity.md).
func (u *ui) logout(w http.ResponseWriter, r *http.Request) error {
	hint := ""
	if c, err := r.Cookie(sessionCookie); err == nil {
		if hint, err = u.svc.EndSessionHint(r.Context(), c.Value); err != nil {
			return err
		}
	}
	clearSession(w)
	if principal(r).Subject != "" && u.cfg.OIDC != nil {
		if to := u.cfg.OIDC.EndSessionURL(r.Context(), hint); to != "" {
			u.moveOn(w, r, "Signed out", "signed-out", "Signed out of Cardex. Signing out at "+u.cfg.OIDC.Name()+"…", to)
			return nil
		}
	}
	return seeOther(w, r, "/")
}

// actionsFor lists the curation actions that make sense in status st, in
// the order the review page shows them (docs/api.md "Curation and visibility" transitions).
func actionsFor(a *registry.Agent) []registry.Action {
	var out []registry.Action
	switch a.Status {
	case registry.StatusPending:
		out = []registry.Action{registry.ActionApprove, registry.ActionReject}
	case registry.StatusApproved:
		if a.NeedsReview {
			// Accept the candidate, or decline it and keep the current
			// version (reject on a flagged agent).
			out = append(out, registry.ActionApprove, registry.ActionReject)
		}
		out = append(out, registry.ActionSuspend)
	case registry.StatusSuspended, registry.StatusRejected, registry.StatusRemoved:
		out = []registry.Action{registry.ActionRestore}
	}
	if a.Status != registry.StatusRemoved {
		out = append(out, registry.ActionRemove)
	}
	return slices.Clip(out)
}
