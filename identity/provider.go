package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Bounds of what is read from the provider.
const (
	maxDocBytes = 1 << 20 // discovery document, JWKS, token response
	// retryDiscovery spaces discovery attempts after a failure, and
	// refreshKeys spaces JWKS refreshes for an unknown key id, so a flood
	// of forged tokens cannot make Cardex hammer the provider.
	retryDiscovery = 10 * time.Second
	refreshKeys    = 30 * time.Second
	// maxKeysAge is how long a JWKS is used before it is read again.
	maxKeysAge = time.Hour
)

// ErrProvider is the provider failing to answer usefully (unreachable,
// an error status, a document that does not parse or does not match the
// issuer). Sign-in and bearer checks that need it fail with it; it is the
// provider's failure, not the caller's.
var ErrProvider = errors.New("identity: the identity provider is unavailable")

// discovery is the part of the provider's metadata Cardex uses (OpenID
// Connect Discovery 1.0 §3).
type discovery struct {
	Issuer             string   `json:"issuer"`
	AuthorizationURL   string   `json:"authorization_endpoint"`
	TokenURL           string   `json:"token_endpoint"`
	JWKSURL            string   `json:"jwks_uri"`
	EndSessionURL      string   `json:"end_session_endpoint"`
	TokenAuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeTypes []string `json:"code_challenge_methods_supported"`
}

// Provider is a configured OpenID provider. Discovery is read on first
// use (the provider may be down when Cardex starts) and kept; the JWKS is
// re-read hourly and when a token names a key it does not hold.
type Provider struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger

	mu         sync.Mutex
	disc       *discovery
	discFailed time.Time
	keys       *jose.JSONWebKeySet
	keysAt     time.Time
}

// New returns the provider of cfg (validated here).
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	if strings.HasPrefix(cfg.Issuer, "http://") {
		dialer.Control = func(network, address string, _ syscall.RawConn) error { return loopbackOnly(network, address) }
	}
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConnsPerHost:    4,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// The provider's endpoints are read where discovery says; a
		// redirect would lead the fetch somewhere the URL rule never saw.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Provider{cfg: cfg, client: client, log: log}, nil
}

// Name is the provider's name for the sign-in button.
func (p *Provider) Name() string { return p.cfg.Name }

// BearerEnabled reports whether JWT access tokens are accepted.
func (p *Provider) BearerEnabled() bool { return p != nil && p.cfg.Audience != "" }

// RedirectURI is where the provider sends the browser back.
func (p *Provider) RedirectURI() string {
	return strings.TrimSuffix(p.cfg.BaseURL, "/") + "/auth/oidc/callback"
}

func (p *Provider) discovery(ctx context.Context) (*discovery, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc != nil {
		return p.disc, nil
	}
	if !p.discFailed.IsZero() && p.cfg.Now().Sub(p.discFailed) < retryDiscovery {
		return nil, fmt.Errorf("%w: discovery failed moments ago", ErrProvider)
	}
	d, err := p.readDiscovery(ctx)
	if err != nil {
		p.discFailed = p.cfg.Now()
		p.log.WarnContext(ctx, "reading the identity provider's discovery document failed", "issuer", p.cfg.Issuer, "err", err)
		return nil, err
	}
	p.disc = d
	return d, nil
}

func (p *Provider) readDiscovery(ctx context.Context) (*discovery, error) {
	var d discovery
	if err := p.getJSON(ctx, strings.TrimSuffix(p.cfg.Issuer, "/")+"/.well-known/openid-configuration", &d); err != nil {
		return nil, err
	}
	// The document must be the issuer's own (OpenID Connect Discovery 1.0
	// §4.3): a mismatch means tokens would carry another iss.
	if d.Issuer != p.cfg.Issuer {
		return nil, fmt.Errorf("%w: discovery names issuer %q, not %q", ErrProvider, d.Issuer, p.cfg.Issuer)
	}
	for _, u := range []string{d.AuthorizationURL, d.TokenURL, d.JWKSURL} {
		if u == "" {
			return nil, fmt.Errorf("%w: discovery lacks an authorization, token or jwks endpoint", ErrProvider)
		}
	}
	for _, u := range []string{d.AuthorizationURL, d.TokenURL, d.JWKSURL, d.EndSessionURL} {
		if u == "" {
			continue
		}
		if err := checkEndpoint(u); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProvider, err)
		}
	}
	return &d, nil
}

// checkEndpoint is checkProviderURL for an endpoint, which may carry a
// query.
func checkEndpoint(raw string) error {
	base, _, _ := strings.Cut(raw, "?")
	return checkProviderURL(base)
}

func (p *Provider) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrProvider, err)
	}
	req.Header.Set("Accept", "application/json")
	return p.do(req, v)
}

// do sends req and decodes a 200 JSON answer of at most maxDocBytes into
// v. Anything else is ErrProvider; an error status's body is read only
// for an OAuth error code (RFC 6749 §5.2), returned as *oauthError.
func (p *Provider) do(req *http.Request, v any) error {
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrProvider, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocBytes+1))
	if err != nil {
		return fmt.Errorf("%w: reading %s: %v", ErrProvider, req.URL.Redacted(), err)
	}
	if len(body) > maxDocBytes {
		return fmt.Errorf("%w: %s answered more than %d bytes", ErrProvider, req.URL.Redacted(), maxDocBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var oe oauthError
		if resp.StatusCode == http.StatusBadRequest && json.Unmarshal(body, &oe) == nil && oe.Code != "" {
			return &oe
		}
		return fmt.Errorf("%w: %s answered %d", ErrProvider, req.URL.Redacted(), resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrProvider, req.URL.Redacted(), err)
	}
	return nil
}

// oauthError is a token endpoint's refusal (RFC 6749 §5.2), such as
// invalid_grant for a code used twice.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
}

func (e *oauthError) Error() string { return "identity: the provider refused: " + e.Code }

// Is makes a refusal a failed sign-in, not the provider's failure.
func (e *oauthError) Is(target error) bool { return target == ErrSignIn }

// keySet returns the provider's keys; with refresh it re-reads them unless
// that was done within refreshKeys.
func (p *Provider) keySet(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error) {
	d, err := p.discovery(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	stale := p.keys == nil || now.Sub(p.keysAt) >= maxKeysAge || (refresh && now.Sub(p.keysAt) >= refreshKeys)
	if !stale {
		return p.keys, nil
	}
	var ks jose.JSONWebKeySet
	if err := p.getJSON(ctx, d.JWKSURL, &ks); err != nil {
		p.log.WarnContext(ctx, "reading the identity provider's keys failed", "issuer", p.cfg.Issuer, "err", err)
		if p.keys != nil {
			return p.keys, nil // keep using the keys held
		}
		return nil, err
	}
	p.keys, p.keysAt = &ks, now
	return p.keys, nil
}
