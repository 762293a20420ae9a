// Package identitytest runs a real OpenID Provider on loopback for tests:
// the certified Go implementation github.com/zitadel/oidc/v3/pkg/op with
// its in-memory example storage and login page, plus the groups claim and
// JWT access tokens Cardex reads. Only tests import it; the cardex binary
// never links it (cmd/cardex/imports_test.go).
package identitytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// ClientID and ClientSecret are the web client registered for Cardex.
const (
	ClientID     = "cardex-web"
	ClientSecret = "cardex-web-secret"
	// Password is every test user's password.
	Password = "correct horse"
)

// User is a person at the provider.
type User struct {
	ID, Username, Email string
	Groups              []string
}

// Provider is a running OpenID Provider.
type Provider struct {
	// Issuer is the provider's issuer URL, http://localhost:{port}: a
	// different site from Cardex on 127.0.0.1, as a real provider is.
	Issuer string

	srv   *httptest.Server
	store *store

	mu       sync.Mutex
	users    map[string]*User // by id
	services map[string]service
}

type service struct {
	secret, subject, audience string
}

// Start runs a provider whose web client redirects to redirectURI and
// may send people back to postLogoutURI after sign-out.
func Start(t testing.TB, redirectURI, postLogoutURI string, users ...User) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port),
		users: map[string]*User{}, services: map[string]service{}}
	for _, u := range users {
		p.users[u.ID] = &u
	}
	web := storage.WebClient(ClientID, ClientSecret, redirectURI)
	p.store = &store{Storage: storage.NewStorageWithClients(userStore{p}, map[string]*storage.Client{ClientID: web}), p: p,
		web: &webClient{Client: web, postLogout: postLogoutURI}}
	router := exampleop.SetupServer(p.Issuer, p.store, nil, false)
	p.srv = httptest.NewUnstartedServer(router)
	p.srv.Listener.Close()
	p.srv.Listener = ln
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// Stop shuts the provider down: it no longer answers, as a provider that
// is down.
func (p *Provider) Stop() { p.srv.Close() }

// SetGroups changes a user's groups at the provider.
func (p *Provider) SetGroups(userID string, groups ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[userID].Groups = groups
}

// AddService registers a client-credentials client whose JWT access
// tokens are issued for audience on behalf of the user subject (with the
// user's groups), and returns its id.
func (p *Provider) AddService(subject, audience string) (id, secret string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id = fmt.Sprintf("svc-%d", len(p.services)+1)
	secret = id + "-secret"
	p.services[id] = service{secret: secret, subject: subject, audience: audience}
	return id, secret
}

// AccessToken gets a JWT access token from the provider's token endpoint
// with the client credentials grant for a service AddService made.
func (p *Provider) AccessToken(t testing.TB, id, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"openid"}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, p.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &tr) != nil || tr.AccessToken == "" {
		t.Fatalf("token endpoint: %d %s", resp.StatusCode, body)
	}
	return tr.AccessToken
}

// SignIn plays the browser through the provider: from the authorization
// URL Cardex redirected to, through the login form as user, to the
// callback URL the provider sends the browser back to, which it returns
// without visiting it. client must keep cookies and not follow redirects.
func (p *Provider) SignIn(t testing.TB, client *http.Client, authURL, username string) string {
	t.Helper()
	loc := authURL
	for range 5 {
		resp, err := client.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		next, err := resp.Location()
		if err != nil {
			t.Fatalf("GET %s: %d without Location", loc, resp.StatusCode)
		}
		loc = next.String()
		if strings.Contains(next.Path, "/login/username") {
			break
		}
	}
	u, _ := url.Parse(loc)
	id := u.Query().Get("authRequestID")
	resp, err := client.PostForm(p.Issuer+"/login/username", url.Values{"id": {id}, "username": {username}, "password": {Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	next, err := resp.Location()
	if err != nil {
		t.Fatalf("login as %s: %d", username, resp.StatusCode)
	}
	// The login page sends the browser to the provider's callback, which
	// issues the code and redirects to Cardex.
	resp, err = client.Get(next.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := resp.Location()
	if err != nil {
		t.Fatalf("provider callback: %d", resp.StatusCode)
	}
	return back.String()
}

// userStore is the example storage's view of p's users.
type userStore struct{ p *Provider }

func (s userStore) user(match func(*User) bool) *storage.User {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	for _, u := range s.p.users {
		if match(u) {
			return &storage.User{ID: u.ID, Username: u.Username, Password: Password, FirstName: u.Username,
				LastName: "Example", Email: u.Email, EmailVerified: true, PreferredLanguage: language.English}
		}
	}
	return nil
}

func (s userStore) GetUserByID(id string) *storage.User {
	return s.user(func(u *User) bool { return u.ID == id })
}

func (s userStore) GetUserByUsername(name string) *storage.User {
	return s.user(func(u *User) bool { return u.Username == name })
}

func (s userStore) ExampleClientID() string { return "service" }

// store adds to the example storage what Cardex reads: the groups claim
// (and email) in ID tokens and access tokens, JWT access tokens for
// client-credentials services, and a post-logout redirect.
type store struct {
	*storage.Storage
	p   *Provider
	web *webClient
}

func (s *store) claims(subject string) map[string]any {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	u, ok := s.p.users[subject]
	if !ok {
		return nil
	}
	return map[string]any{"groups": slices.Clone(u.Groups), "email": u.Email}
}

func (s *store) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	for k, v := range s.claims(req.GetSubject()) {
		if k == "email" {
			info.Email = v.(string)
			continue
		}
		info.AppendClaims(k, v)
	}
	return nil
}

func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	return s.claims(userID), nil
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if id == ClientID {
		return s.web, nil
	}
	return s.Storage.GetClientByClientID(ctx, id)
}

func (s *store) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	s.p.mu.Lock()
	svc, ok := s.p.services[id]
	s.p.mu.Unlock()
	if !ok || svc.secret != secret {
		return nil, errors.New("wrong service or secret")
	}
	return &serviceClient{Client: storage.WebClient(id, secret)}, nil
}

func (s *store) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	s.p.mu.Lock()
	svc, ok := s.p.services[id]
	s.p.mu.Unlock()
	if !ok {
		return nil, errors.New("wrong service")
	}
	return &oidc.JWTTokenRequest{Subject: svc.subject, Audience: []string{svc.audience}, Scopes: scopes}, nil
}

type webClient struct {
	*storage.Client
	postLogout string
}

func (c *webClient) PostLogoutRedirectURIs() []string { return []string{c.postLogout} }

type serviceClient struct{ *storage.Client }

func (c *serviceClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (c *serviceClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
