package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cardexhq/cardex/registry"
)

type tokensView struct {
	Tokens  []registry.Token
	Created *createdToken
	Error   string
	Done    string
}

// createdToken is shown once, on the page that answers the creating POST;
// it is never stored or shown again.
type createdToken struct {
	Secret string
	Token  registry.Token
}

// tokensPage is GET /admin/tokens.
func (u *ui) tokensPage(w http.ResponseWriter, r *http.Request) error {
	v := tokensView{}
	if r.URL.Query().Get("done") == "revoke" {
		v.Done = "Token revoked."
	}
	return u.renderTokens(w, r, http.StatusOK, v)
}

func (u *ui) renderTokens(w http.ResponseWriter, r *http.Request, status int, v tokensView) error {
	ts, err := u.svc.ListTokens(r.Context())
	if err != nil {
		return err
	}
	v.Tokens = ts
	u.render(w, r, status, "admin_tokens", "API tokens", v)
	return nil
}

// createToken is POST /admin/tokens. The answer carries the secret, so it
// is not redirected and not cached (Cache-Control: no-store by admin()).
func (u *ui) createToken(w http.ResponseWriter, r *http.Request) error {
	form, err := postForm(w, r)
	if err != nil {
		return err
	}
	req := registry.TokenRequest{Role: registry.Role(form.Get("role")), Name: strings.TrimSpace(form.Get("name"))}
	req.Hosts = append(req.Hosts, strings.FieldsFunc(form.Get("hosts"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' })...)
	req.Groups = splitGroups(form.Get("groups"))
	if d := strings.TrimSpace(form.Get("expiresDays")); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > 3650 {
			return u.renderTokens(w, r, http.StatusBadRequest, tokensView{Error: "Expiry must be a number of days from 1 to 3650."})
		}
		at := u.cfg.Now().Add(time.Duration(n) * 24 * time.Hour)
		req.ExpiresAt = &at
	}
	secret, tok, err := u.svc.CreateToken(r.Context(), req)
	var ve *registry.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 {
		return u.renderTokens(w, r, http.StatusBadRequest, tokensView{Error: "The token was not created: " + ve.Errors[0].Message + "."})
	}
	if err != nil {
		return err
	}
	u.log.InfoContext(r.Context(), "token created in the admin UI", "token_id", tok.ID, "role", string(tok.Role), "actor", principal(r).TokenID)
	return u.renderTokens(w, r, http.StatusCreated, tokensView{Created: &createdToken{Secret: secret, Token: tok}})
}

// revokeToken is POST /admin/tokens/{id}/revoke.
func (u *ui) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if err := u.svc.RevokeToken(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/tokens?done=revoke")
}
