package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cardexhq/cardex/registry"
)

// ErrSignIn is a sign-in that cannot complete for a reason of the
// person's or the browser's (a code the provider refuses, an ID token
// that does not verify, a nonce that does not match): the visitor is
// told to try again. The provider being down is ErrProvider.
var ErrSignIn = errors.New("identity: sign-in failed")

// Flow is what one sign-in carries through the provider's redirect: the
// state (against CSRF on the callback), the nonce (binding the ID token to
// this sign-in) and the PKCE verifier (binding the code to this browser,
// RFC 7636 S256).
type Flow struct {
	State, Nonce, Verifier string
}

// NewFlow draws a flow's three secrets, 256 bits each.
func NewFlow() Flow {
	return Flow{State: random(), Nonce: random(), Verifier: random()}
}

func random() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// AuthURL is the provider's authorization endpoint for f.
func (p *Provider) AuthURL(ctx context.Context, f Flow) (string, error) {
	d, err := p.discovery(ctx)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(f.Verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {p.cfg.ClientID},
		"redirect_uri":          {p.RedirectURI()},
		"scope":                 {strings.Join(p.cfg.Scopes, " ")},
		"state":                 {f.State},
		"nonce":                 {f.Nonce},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
	}
	sep := "?"
	if strings.Contains(d.AuthorizationURL, "?") {
		sep = "&"
	}
	return d.AuthorizationURL + sep + q.Encode(), nil
}

// Finish completes a sign-in: the code is exchanged (with f's verifier) at
// the token endpoint, the ID token verified (signature, iss, aud, azp,
// exp, and f's nonce) and mapped to a principal. The caller has already
// checked the callback's state against f's. The ID token is returned for
// EndSessionURL's hint.
func (p *Provider) Finish(ctx context.Context, code string, f Flow) (registry.Principal, string, error) {
	if code == "" || len(code) > 4096 {
		return registry.Principal{}, "", fmt.Errorf("%w: no code", ErrSignIn)
	}
	d, err := p.discovery(ctx)
	if err != nil {
		return registry.Principal{}, "", err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {p.RedirectURI()},
		"code_verifier": {f.Verifier},
	}
	basic := p.cfg.ClientSecret != "" && (len(d.TokenAuthMethods) == 0 || slices.Contains(d.TokenAuthMethods, "client_secret_basic"))
	if !basic {
		form.Set("client_id", p.cfg.ClientID)
		if p.cfg.ClientSecret != "" {
			form.Set("client_secret", p.cfg.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return registry.Principal{}, "", fmt.Errorf("%w: %v", ErrProvider, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		// RFC 6749 §2.3.1: both parts form-encoded before Basic.
		req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	}
	var tr struct {
		IDToken string `json:"id_token"`
	}
	if err := p.do(req, &tr); err != nil {
		return registry.Principal{}, "", err
	}
	if tr.IDToken == "" {
		return registry.Principal{}, "", fmt.Errorf("%w: the token response has no ID token", ErrSignIn)
	}
	c, err := p.verify(ctx, tr.IDToken)
	if err != nil {
		return registry.Principal{}, "", signInErr(err)
	}
	if err := p.checkTimes(c); err != nil {
		return registry.Principal{}, "", signInErr(err)
	}
	// OpenID Connect Core §3.1.3.7: aud contains the client id; with more
	// than one audience, azp is the client id.
	aud := c.audience()
	if !slices.Contains(aud, p.cfg.ClientID) || (len(aud) > 1 && c.str("azp") != p.cfg.ClientID) ||
		(c.str("azp") != "" && c.str("azp") != p.cfg.ClientID) {
		return registry.Principal{}, "", fmt.Errorf("%w: the ID token is for another client", ErrSignIn)
	}
	if n := c.str("nonce"); n == "" || subtle.ConstantTimeCompare([]byte(n), []byte(f.Nonce)) != 1 {
		return registry.Principal{}, "", fmt.Errorf("%w: the ID token's nonce does not match this sign-in", ErrSignIn)
	}
	pr, err := p.principal(ctx, c)
	if err != nil {
		return registry.Principal{}, "", signInErr(err)
	}
	p.log.InfoContext(ctx, "signed in with the identity provider", "subject", pr.Subject, "role", string(pr.Role), "groups", len(pr.Groups))
	return pr, tr.IDToken, nil
}

func signInErr(err error) error {
	var te *TokenError
	if errors.As(err, &te) {
		return fmt.Errorf("%w: ID token refused: %s", ErrSignIn, te.Reason)
	}
	return err
}

// EndSessionURL is where sign-out sends the browser to end the
// provider's session too (OpenID Connect RP-Initiated Logout 1.0), with
// {BaseURL}/ as the post-logout redirect and the sign-in's ID token as
// id_token_hint when there is one (some providers require it); "" when the
// provider has no end-session endpoint or cannot be reached.
func (p *Provider) EndSessionURL(ctx context.Context, idTokenHint string) string {
	d, err := p.discovery(ctx)
	if err != nil || d.EndSessionURL == "" {
		return ""
	}
	q := url.Values{
		"client_id":                {p.cfg.ClientID},
		"post_logout_redirect_uri": {strings.TrimSuffix(p.cfg.BaseURL, "/") + "/"},
	}
	if idTokenHint != "" {
		q.Set("id_token_hint", idTokenHint)
	}
	sep := "?"
	if strings.Contains(d.EndSessionURL, "?") {
		sep = "&"
	}
	return d.EndSessionURL + sep + q.Encode()
}
