package identity_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/identity/identitytest"
	"github.com/cardexhq/cardex/registry"
)

const (
	base     = "http://127.0.0.1:1"
	audience = "cardex-api"
)

var users = []identitytest.User{
	{ID: "u-admin", Username: "ada", Email: "ada@example.com", Groups: []string{"/cardex-admins", "payments"}},
	{ID: "u-pay", Username: "pat", Email: "pat@example.com", Groups: []string{"payments"}},
	{ID: "u-pub", Username: "pia", Email: "pia@example.com", Groups: []string{"publishers"}},
}

func start(t *testing.T) (*identitytest.Provider, *identity.Provider, *time.Time) {
	t.Helper()
	op := identitytest.Start(t, base+"/auth/oidc/callback", base+"/", users...)
	now := time.Now()
	p, err := identity.New(identity.Config{Issuer: op.Issuer, ClientID: identitytest.ClientID, ClientSecret: identitytest.ClientSecret,
		BaseURL: base, AdminGroups: []string{"/cardex-admins"}, PublisherHosts: map[string][]string{"publishers": {"pay.example.com"}},
		Audience: audience, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return op, p, &now
}

func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn runs the code flow against the provider and returns the code
// and state it sends back.
func signIn(t *testing.T, op *identitytest.Provider, p *identity.Provider, f identity.Flow, username string) url.Values {
	t.Helper()
	authURL, err := p.AuthURL(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := url.Parse(op.SignIn(t, browser(), authURL, username))
	if err != nil || back.Path != "/auth/oidc/callback" {
		t.Fatalf("sent back to %v", back)
	}
	return back.Query()
}

func TestSignInMapsGroupsToRoles(t *testing.T) {
	op, p, _ := start(t)
	for _, c := range []struct {
		user  string
		want  registry.Principal
		hosts []string
	}{
		{"ada", registry.Principal{Role: registry.RoleAdmin, TokenID: "oidc:u-admin", Name: "ada@example.com", Subject: "u-admin",
			DisplayName: "ada@example.com", Groups: []string{"/cardex-admins", "payments"}}, nil},
		{"pat", registry.Principal{Role: registry.RoleReader, TokenID: "oidc:u-pay", Name: "pat@example.com", Subject: "u-pay",
			DisplayName: "pat@example.com", Groups: []string{"payments"}}, nil},
		{"pia", registry.Principal{Role: registry.RolePublisher, TokenID: "oidc:u-pub", Name: "pia@example.com", Subject: "u-pub",
			DisplayName: "pia@example.com", Groups: []string{"publishers"}, Hosts: []string{"pay.example.com"}}, nil},
	} {
		f := identity.NewFlow()
		q := signIn(t, op, p, f, c.user)
		if q.Get("state") != f.State {
			t.Fatalf("%s: state %q", c.user, q.Get("state"))
		}
		got, idToken, err := p.Finish(t.Context(), q.Get("code"), f)
		if err != nil {
			t.Fatalf("%s: %v", c.user, err)
		}
		if !principalEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.user, got, c.want)
		}
		if !identity.LooksLikeJWT(idToken) {
			t.Errorf("%s: ID token %q", c.user, idToken)
		}
	}
}

func principalEqual(a, b registry.Principal) bool {
	return a.Role == b.Role && a.TokenID == b.TokenID && a.Name == b.Name && a.Subject == b.Subject &&
		a.DisplayName == b.DisplayName && slices.Equal(a.Groups, b.Groups) && slices.Equal(a.Hosts, b.Hosts)
}

// The nonce binds the ID token to the sign-in that asked for it, the PKCE
// verifier the code to the browser that began it, and a code is good once.
func TestSignInRefusesWrongNonceVerifierAndReplayedCode(t *testing.T) {
	op, p, _ := start(t)
	f := identity.NewFlow()
	q := signIn(t, op, p, f, "pat")
	wrongNonce := f
	wrongNonce.Nonce = identity.NewFlow().Nonce
	if _, _, err := p.Finish(t.Context(), q.Get("code"), wrongNonce); !errors.Is(err, identity.ErrSignIn) || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("wrong nonce: %v", err)
	}

	f = identity.NewFlow()
	q = signIn(t, op, p, f, "pat")
	wrongVerifier := f
	wrongVerifier.Verifier = identity.NewFlow().Verifier
	if _, _, err := p.Finish(t.Context(), q.Get("code"), wrongVerifier); !errors.Is(err, identity.ErrSignIn) {
		t.Errorf("wrong verifier: %v", err)
	}

	f = identity.NewFlow()
	q = signIn(t, op, p, f, "pat")
	if _, _, err := p.Finish(t.Context(), q.Get("code"), f); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Finish(t.Context(), q.Get("code"), f); !errors.Is(err, identity.ErrSignIn) {
		t.Errorf("replayed code: %v", err)
	}
}

func reason(err error) string {
	var te *identity.TokenError
	if errors.As(err, &te) {
		return te.Reason
	}
	return "not a TokenError: " + errString(err)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// forge makes an unsigned or HMAC-signed JWT with the given claims.
func forge(alg string, claims map[string]any, key []byte) string {
	h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sig := ""
	if alg == "HS256" {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(in))
		sig = base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	return in + "." + sig
}

func TestBearerAccessTokens(t *testing.T) {
	op, p, now := start(t)
	other := identitytest.Start(t, base+"/auth/oidc/callback", base+"/", users...)
	id, secret := op.AddService("u-pay", audience)
	good := op.AccessToken(t, id, secret)
	wid, wsecret := op.AddService("u-pay", "someone-else")
	wrongAud := op.AccessToken(t, wid, wsecret)
	oid, osecret := other.AddService("u-pay", audience)
	otherIss := other.AccessToken(t, oid, osecret)
	// An ID token from a real sign-in.
	f := identity.NewFlow()
	authURL, _ := p.AuthURL(t.Context(), f)
	cb, _ := url.Parse(op.SignIn(t, browser(), authURL, "pat"))
	idToken := exchangeIDToken(t, op, cb.Query().Get("code"), f)

	pr, err := p.Bearer(t.Context(), good)
	want := registry.Principal{Role: registry.RoleReader, TokenID: "oidc:u-pay", Name: "pat@example.com", Subject: "u-pay",
		DisplayName: "pat@example.com", Groups: []string{"payments"}}
	if err != nil || !principalEqual(pr, want) {
		t.Fatalf("good token: %+v %v", pr, err)
	}
	claims := map[string]any{"iss": op.Issuer, "sub": "u-admin", "aud": audience, "exp": now.Add(time.Hour).Unix(), "groups": []string{"/cardex-admins"}}
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+op.Issuer+`","sub":"u-admin","aud":"`+audience+`","exp":9999999999,"groups":["/cardex-admins"]}`)) + "." + parts[2]
	for _, c := range []struct {
		name, token, reason string
	}{
		{"alg none", forge("none", claims, nil), identity.ReasonAlgNotAllowed},
		{"HMAC with the client secret", forge("HS256", claims, []byte(identitytest.ClientSecret)), identity.ReasonAlgNotAllowed},
		{"another issuer", otherIss, identity.ReasonWrongIssuer},
		{"claims swapped under a real signature", tampered, identity.ReasonBadSignature},
		{"another audience", wrongAud, identity.ReasonWrongAudience},
		{"an ID token", idToken, identity.ReasonNotAccessToken},
		{"garbage", "a.b.c", identity.ReasonMalformed},
	} {
		if _, err := p.Bearer(t.Context(), c.token); reason(err) != c.reason || !errors.Is(err, registry.ErrUnauthorized) {
			t.Errorf("%s: %v, want %s", c.name, err, c.reason)
		}
	}
	// Past exp by more than the skew; within the skew still good.
	*now = now.Add(10 * time.Minute)
	if _, err := p.Bearer(t.Context(), good); reason(err) != identity.ReasonExpired {
		t.Errorf("expired: %v", err)
	}
}

func exchangeIDToken(t *testing.T, op *identitytest.Provider, code string, f identity.Flow) string {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {base + "/auth/oidc/callback"}, "code_verifier": {f.Verifier}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, op.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(identitytest.ClientID, identitytest.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || tr.IDToken == "" {
		t.Fatalf("token endpoint %d: %v", resp.StatusCode, err)
	}
	return tr.IDToken
}

func TestConfigRefusesInsecureIssuer(t *testing.T) {
	for _, c := range []struct {
		issuer string
		ok     bool
	}{
		{"https://idp.example.com/realms/cardex", true},
		{"http://localhost:8081", true},
		{"http://127.0.0.1:8081", true},
		{"http://[::1]:8081", true},
		{"http://idp.example.com", false},
		{"http://10.0.0.5", false},
		{"ftp://idp.example.com", false},
		{"https://user@idp.example.com", false},
	} {
		cfg := identity.Config{Issuer: c.issuer, ClientID: "c", BaseURL: base}
		if err := cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.issuer, err)
		}
	}
	cfg := identity.Config{Issuer: "https://idp.example.com", ClientID: "c", BaseURL: base, Audience: "c"}
	if err := cfg.Validate(); !errors.Is(err, identity.ErrConfig) {
		t.Errorf("audience = client id: %v", err)
	}
}

// A provider that does not answer is ErrProvider (the server's trouble,
// 502/503), never a failed sign-in.
func TestUnreachableProviderIsUnavailable(t *testing.T) {
	p, err := identity.New(identity.Config{Issuer: "http://localhost:1", ClientID: "c", BaseURL: base, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := p.AuthURL(ctx, identity.NewFlow()); !errors.Is(err, identity.ErrProvider) {
		t.Errorf("unreachable provider: %v", err)
	}
}

func TestParsePublisherHosts(t *testing.T) {
	m, err := identity.ParsePublisherHosts("payments=Pay.example.com, api.example.com; ops=ops.example.com")
	if err != nil || !slices.Equal(m["payments"], []string{"pay.example.com", "api.example.com"}) || !slices.Equal(m["ops"], []string{"ops.example.com"}) {
		t.Errorf("%v %v", m, err)
	}
	for _, bad := range []string{"payments", "=a.example.com", "payments=", "payments=https://a.example.com"} {
		if _, err := identity.ParsePublisherHosts(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// BenchmarkBearer is the cost of checking one RS256 access token with the
// provider's keys held (what every API, MCP or A2A request with a JWT
// adds).
func BenchmarkBearer(b *testing.B) {
	op := identitytest.Start(b, base+"/auth/oidc/callback", base+"/", users...)
	p, err := identity.New(identity.Config{Issuer: op.Issuer, ClientID: identitytest.ClientID, BaseURL: base, Audience: audience})
	if err != nil {
		b.Fatal(err)
	}
	id, secret := op.AddService("u-pay", audience)
	tok := op.AccessToken(b, id, secret)
	if _, err := p.Bearer(b.Context(), tok); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Bearer(b.Context(), tok); err != nil {
			b.Fatal(err)
		}
	}
}
