package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/identity/identitytest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Bearer JWTs from the identity provider through the API, every response
// checked against openapi.yaml: an access token acts as its groups' role;
// an expired one and an ID token answer 401 naming the reason class with
// the invalid_token challenge; a provider that cannot be reached is 503,
// not the caller's fault; Cardex tokens keep working beside them.
func TestBearerJWT(t *testing.T) {
	const base = "http://127.0.0.1:1"
	op := identitytest.Start(t, base+"/auth/oidc/callback", base+"/",
		identitytest.User{ID: "u-ada", Username: "ada", Email: "ada@example.com", Groups: []string{"/cardex-admins"}},
		identitytest.User{ID: "u-pat", Username: "pat", Email: "pat@example.com", Groups: []string{"payments"}})
	var skew time.Duration
	idp, err := identity.New(identity.Config{Issuer: op.Issuer, ClientID: identitytest.ClientID, ClientSecret: identitytest.ClientSecret,
		BaseURL: base, AdminGroups: []string{"/cardex-admins"}, Audience: "cardex-api", Now: func() time.Time { return time.Now().Add(skew) }})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, registrytest.SQLite(t), func(c *Config) { c.Bearer = idp.Bearer })
	token := func(sub string) string {
		id, secret := op.AddService(sub, "cardex-api")
		return op.AccessToken(t, id, secret)
	}
	ada, pat := token("u-ada"), token("u-pat")

	h.do(req{method: "GET", path: "/api/v1/audit", token: ada}).expectStatus(t, http.StatusOK)
	h.do(req{method: "GET", path: "/api/v1/audit", token: pat}).expectProblem(t, http.StatusForbidden, "forbidden")
	secret, _, err := h.svc.CreateToken(t.Context(), registry.TokenRequest{Role: registry.RoleAdmin, Name: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	h.do(req{method: "GET", path: "/api/v1/audit", token: secret}).expectStatus(t, http.StatusOK)

	// An ID token from a real sign-in is never a bearer credential.
	jar := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	jar.Jar = newJar()
	f := identity.NewFlow()
	authURL, err := idp.AuthURL(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := url.Parse(op.SignIn(t, jar, authURL, "ada"))
	idToken := exchange(t, op.Issuer, base, cb.Query().Get("code"), f.Verifier)
	r := h.do(req{method: "GET", path: "/api/v1/audit", token: idToken})
	if p := r.expectProblem(t, http.StatusUnauthorized, "token-not-access-token"); p.Detail != "the bearer JWT was refused: not-access-token" ||
		r.header.Get("WWW-Authenticate") != `Bearer realm="cardex", error="invalid_token"` {
		t.Errorf("ID token: %+v %q", p, r.header.Get("WWW-Authenticate"))
	}

	// Past exp by more than a minute.
	skew = time.Hour
	r = h.do(req{method: "GET", path: "/api/v1/agents", token: pat})
	if p := r.expectProblem(t, http.StatusUnauthorized, "token-expired"); p.Detail != "the bearer JWT was refused: expired" {
		t.Errorf("expired: %+v", p)
	}
	skew = 0

	// The provider down before this server read its keys: 503, retry
	// later.
	op.Stop()
	// A server that holds the keys keeps accepting tokens meanwhile.
	h.do(req{method: "GET", path: "/api/v1/audit", token: ada}).expectStatus(t, http.StatusOK)
	down, err := identity.New(identity.Config{Issuer: op.Issuer, ClientID: identitytest.ClientID, BaseURL: base, Audience: "cardex-api"})
	if err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, registrytest.SQLite(t), func(c *Config) { c.Bearer = down.Bearer })
	r = h2.do(req{method: "GET", path: "/api/v1/agents", token: pat})
	r.expectProblem(t, http.StatusServiceUnavailable, "identity-provider-unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}

func exchange(t *testing.T, issuer, base, code, verifier string) string {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {base + "/auth/oidc/callback"}, "code_verifier": {verifier}}
	hr, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, issuer+"/oauth/token", strings.NewReader(form.Encode()))
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hr.SetBasicAuth(identitytest.ClientID, identitytest.ClientSecret)
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tr struct {
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tr); err != nil || tr.IDToken == "" {
		t.Fatalf("token endpoint %d: %v", res.StatusCode, err)
	}
	return tr.IDToken
}

func newJar() http.CookieJar {
	j, _ := cookiejar.New(nil)
	return j
}
