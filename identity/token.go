package identity

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cardexhq/cardex/registry"
)

// Why a bearer JWT is refused: the reason class a 401 names
// (docs/errors.md). Nothing more specific is said, so a refusal teaches
// nothing about the provider's keys or settings.
const (
	ReasonMalformed      = "malformed"
	ReasonWrongIssuer    = "wrong-issuer"
	ReasonAlgNotAllowed  = "alg-not-allowed"
	ReasonBadSignature   = "bad-signature"
	ReasonExpired        = "expired"
	ReasonWrongAudience  = "wrong-audience"
	ReasonNotAccessToken = "not-access-token"
	ReasonNoSubject      = "no-subject"
)

// Reasons lists every reason class.
var Reasons = []string{ReasonMalformed, ReasonWrongIssuer, ReasonAlgNotAllowed, ReasonBadSignature,
	ReasonExpired, ReasonWrongAudience, ReasonNotAccessToken, ReasonNoSubject}

// TokenError is a refused JWT. It is a registry.ErrUnauthorized, so code
// that only knows "the credentials are not valid" treats it so.
type TokenError struct{ Reason string }

func (e *TokenError) Error() string { return "identity: token refused: " + e.Reason }

// Unwrap makes a TokenError a registry.ErrUnauthorized.
func (e *TokenError) Unwrap() error { return registry.ErrUnauthorized }

func refused(reason string) error { return &TokenError{Reason: reason} }

// allowedAlgs are the asymmetric JWS algorithms accepted. none and the
// HMAC family are never: an HMAC key would be the client secret or a
// public key misused as one (docs/security.md "Single sign-on").
var allowedAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// LooksLikeJWT tells a JWT (three dot-separated parts) from a Cardex
// token, which has no dot.
func LooksLikeJWT(s string) bool { return strings.Count(s, ".") == 2 }

// claims is a verified token's payload.
type claims map[string]any

func (c claims) str(name string) string {
	s, _ := c[name].(string)
	return s
}

// audience reads aud, a string or an array of strings (RFC 7519 §4.1.3).
func (c claims) audience() []string {
	switch v := c["aud"].(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, a := range v {
			if s, ok := a.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func (c claims) time(name string) (time.Time, bool) {
	switch v := c[name].(type) {
	case float64:
		return time.Unix(int64(v), 0), true
	case json.Number:
		n, err := v.Int64()
		return time.Unix(n, 0), err == nil
	}
	return time.Time{}, false
}

// verify checks raw's algorithm, issuer and signature and returns its
// claims. The issuer is read before the signature is checked: a token of
// another issuer could not be checked with this issuer's keys anyway.
func (p *Provider) verify(ctx context.Context, raw string) (claims, error) {
	if len(raw) > 16<<10 {
		return nil, refused(ReasonMalformed)
	}
	hdr, payload, ok := splitJWT(raw)
	if !ok {
		return nil, refused(ReasonMalformed)
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(hdr, &h) != nil {
		return nil, refused(ReasonMalformed)
	}
	if !slices.Contains(allowedAlgs, jose.SignatureAlgorithm(h.Alg)) {
		return nil, refused(ReasonAlgNotAllowed)
	}
	var unverified struct {
		Iss any `json:"iss"`
	}
	if json.Unmarshal(payload, &unverified) != nil {
		return nil, refused(ReasonMalformed)
	}
	if iss, _ := unverified.Iss.(string); iss != p.cfg.Issuer {
		return nil, refused(ReasonWrongIssuer)
	}
	tok, err := jwt.ParseSigned(raw, allowedAlgs)
	if err != nil || len(tok.Headers) != 1 {
		return nil, refused(ReasonMalformed)
	}
	kid := tok.Headers[0].KeyID
	ks, err := p.keySet(ctx, false)
	if err != nil {
		return nil, err
	}
	keys := candidates(ks, kid, h.Alg)
	if len(keys) == 0 {
		// A key id not held yet: the provider may have rotated its keys.
		if ks, err = p.keySet(ctx, true); err != nil {
			return nil, err
		}
		keys = candidates(ks, kid, h.Alg)
	}
	for _, k := range keys {
		var c claims
		if err := tok.Claims(k.Key, &c); err == nil {
			return c, nil
		}
	}
	return nil, refused(ReasonBadSignature)
}

// candidates are the keys of ks that may have signed a token with this
// key id and algorithm: signing keys (use absent or sig) of that id, or
// every signing key when the token names none.
func candidates(ks *jose.JSONWebKeySet, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range ks.Keys {
		if (kid != "" && k.KeyID != kid) || (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) || !k.IsPublic() {
			continue
		}
		out = append(out, k)
	}
	return out
}

func splitJWT(raw string) (header, payload []byte, ok bool) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, nil, false
	}
	h, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	pl, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	return h, pl, err1 == nil && err2 == nil
}

// checkTimes applies exp (required), nbf and iat with MaxSkew.
func (p *Provider) checkTimes(c claims) error {
	now := p.cfg.Now()
	exp, ok := c.time("exp")
	if !ok || !now.Before(exp.Add(MaxSkew)) {
		return refused(ReasonExpired)
	}
	if nbf, ok := c.time("nbf"); ok && now.Add(MaxSkew).Before(nbf) {
		return refused(ReasonExpired)
	}
	if iat, ok := c.time("iat"); ok && now.Add(MaxSkew).Before(iat) {
		return refused(ReasonExpired)
	}
	return nil
}

// Bearer verifies a JWT access token (docs/identity.md "API access"): the
// provider's signature with an asymmetric algorithm, iss, exp/nbf/iat
// within MaxSkew, aud naming the configured audience, and not an ID
// token. An ID token is told apart by the audience rule: ID tokens are
// always issued to the client id (OpenID Connect Core §2), the audience
// never equals the client id (Validate), so a token whose aud
// names the client id, or that carries a nonce, is refused as
// not-access-token — header typ values are not relied on, since major
// providers send plain "JWT" for both kinds.
func (p *Provider) Bearer(ctx context.Context, raw string) (registry.Principal, error) {
	if !p.BearerEnabled() {
		return registry.Principal{}, registry.ErrUnauthorized
	}
	c, err := p.verify(ctx, raw)
	if err != nil {
		return registry.Principal{}, err
	}
	if err := p.checkTimes(c); err != nil {
		return registry.Principal{}, err
	}
	aud := c.audience()
	if slices.Contains(aud, p.cfg.ClientID) || c["nonce"] != nil {
		return registry.Principal{}, refused(ReasonNotAccessToken)
	}
	if !slices.Contains(aud, p.cfg.Audience) {
		return registry.Principal{}, refused(ReasonWrongAudience)
	}
	pr, err := p.principal(ctx, c)
	if errors.Is(err, ErrSignIn) {
		return registry.Principal{}, refused(ReasonMalformed)
	}
	return pr, err
}

// maxGroups bounds the groups kept from one token; a provider sending
// more (Entra past 200 sends a reference instead) is refused rather than
// cut, since a cut list could drop the group that grants access.
const (
	maxGroups      = 1000
	maxClaimLength = 512
)

// errTooManyGroups refuses a person whose groups claim is past maxGroups.
var errTooManyGroups = fmt.Errorf("%w: the groups claim holds too many groups", ErrSignIn)

// principal maps a verified token's claims to a Cardex caller
// (docs/identity.md "What a group grants").
func (p *Provider) principal(ctx context.Context, c claims) (registry.Principal, error) {
	sub := c.str(p.cfg.SubjectClaim)
	if sub == "" || len(sub) > maxClaimLength {
		return registry.Principal{}, refused(ReasonNoSubject)
	}
	groups, err := groupsOf(c[p.cfg.GroupsClaim])
	if err != nil {
		return registry.Principal{}, err
	}
	if names, ok := c["_claim_names"].(map[string]any); ok && names[p.cfg.GroupsClaim] != nil && groups == nil {
		// Entra's group overage: the token names a Graph query instead of
		// the groups, which Cardex does not follow (docs/identity.md).
		p.log.WarnContext(ctx, "the identity provider sent a groups reference instead of groups; the person gets no groups", "subject", sub)
	}
	display := ""
	for _, k := range []string{"email", "preferred_username", "name", "upn"} {
		if v := c.str(k); v != "" && len(v) <= maxClaimLength {
			display = v
			break
		}
	}
	pr := registry.Principal{Role: registry.RoleReader, TokenID: "oidc:" + sub, Subject: sub, DisplayName: display,
		Groups: groups}
	pr.Name = display
	if pr.Name == "" {
		pr.Name = sub
	}
	for _, g := range groups {
		if slices.Contains(p.cfg.AdminGroups, g) {
			pr.Role, pr.Hosts = registry.RoleAdmin, nil
			return pr, nil
		}
		if hosts, ok := p.cfg.PublisherHosts[g]; ok {
			pr.Role = registry.RolePublisher
			for _, h := range hosts {
				if !slices.Contains(pr.Hosts, h) {
					pr.Hosts = append(pr.Hosts, h)
				}
			}
		}
	}
	slices.Sort(pr.Hosts)
	return pr, nil
}

// groupsOf reads a groups claim exactly as sent: an array of strings, or
// one string; nil when absent. Non-string members are skipped (Cardex
// matches group names, not objects).
func groupsOf(v any) ([]string, error) {
	var out []string
	switch g := v.(type) {
	case nil:
		return nil, nil
	case string:
		out = []string{g}
	case []any:
		if len(g) > maxGroups {
			return nil, errTooManyGroups
		}
		for _, x := range g {
			if s, ok := x.(string); ok && s != "" && len(s) <= maxClaimLength && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	default:
		return nil, fmt.Errorf("%w: the groups claim is neither a string nor a list", ErrSignIn)
	}
	return out, nil
}
