// Package identity signs people in with an OpenID Connect provider and
// accepts the provider's JWT access tokens as bearer credentials
// (docs/identity.md). It turns what the provider says about a person (a
// subject, a name, groups) into a registry.Principal: groups map to a
// role, and are kept as the provider sent them for the groups visibility
// rule. The web UI uses the sign-in half, the API, MCP and A2A faces the
// bearer half.
package identity

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults of the settings (docs/configuration.md).
const (
	DefaultScopes       = "openid profile email"
	DefaultGroupsClaim  = "groups"
	DefaultSubjectClaim = "sub"
	// MaxSkew is how far a token's exp, nbf and iat may be off the
	// server's clock.
	MaxSkew = time.Minute
)

// ErrConfig is an unusable Config.
var ErrConfig = errors.New("identity: invalid config")

// Config is the provider and how its people map to Cardex roles.
type Config struct {
	// Issuer is the provider's issuer URL; discovery is read from
	// {Issuer}/.well-known/openid-configuration. https, or http on a
	// loopback host only.
	Issuer string
	// Name is what the sign-in button calls the provider; empty is the
	// issuer's host.
	Name string
	// ClientID and ClientSecret are the web UI's client at the provider;
	// an empty secret is a public client (PKCE only).
	ClientID     string
	ClientSecret string
	// BaseURL is Cardex's public URL: the redirect URI is
	// {BaseURL}/auth/oidc/callback, the post-logout redirect {BaseURL}/.
	BaseURL string
	// Scopes asked for at sign-in; must include openid.
	Scopes []string
	// GroupsClaim and SubjectClaim name the claims read for groups and
	// for the stable subject recorded in the audit log.
	GroupsClaim  string
	SubjectClaim string
	// AdminGroups make their members admins.
	AdminGroups []string
	// PublisherHosts maps a group to the hosts its members publish for:
	// members of such a group (and of no admin group) are publishers.
	PublisherHosts map[string][]string
	// Audience enables bearer access: JWT access tokens whose aud names
	// it are accepted. Empty leaves bearer JWTs refused.
	Audience string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Log receives sign-in events; nil discards.
	Log *slog.Logger
	// Timeout bounds each request to the provider; zero is 10 s.
	Timeout time.Duration
}

// ParseScopes splits a space- or comma-separated scope list.
func ParseScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}

// ParseList splits a comma-separated list, dropping empty items.
func ParseList(s string) []string {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// ParsePublisherHosts reads "GROUP=host1,host2;GROUP2=host3": the hosts
// each publisher group publishes for. Hosts are lower-cased; a group
// without hosts is an error (it would grant nothing).
func ParsePublisherHosts(s string) (map[string][]string, error) {
	out := map[string][]string{}
	for item := range strings.SplitSeq(s, ";") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		group, hosts, ok := strings.Cut(item, "=")
		group = strings.TrimSpace(group)
		if !ok || group == "" {
			return nil, fmt.Errorf("%q: want GROUP=host1,host2", item)
		}
		list := ParseList(strings.ToLower(hosts))
		if len(list) == 0 {
			return nil, fmt.Errorf("group %q names no hosts", group)
		}
		for _, h := range list {
			if strings.ContainsAny(h, "/:@?# ") {
				return nil, fmt.Errorf("group %q: %q is not a host name", group, h)
			}
		}
		out[group] = append(out[group], list...)
	}
	return out, nil
}

// Enabled reports whether sign-in with a provider is configured.
func (c *Config) Enabled() bool { return c != nil && c.Issuer != "" }

// Validate checks c and fills in its defaults.
func (c *Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if err := checkProviderURL(c.Issuer); err != nil {
		return bad("issuer: %v", err)
	}
	if c.ClientID == "" {
		return bad("a client id is required with an issuer")
	}
	if c.BaseURL == "" {
		return bad("a base URL is required with an issuer (the redirect URI is {base-url}/auth/oidc/callback)")
	}
	if len(c.Scopes) == 0 {
		c.Scopes = ParseScopes(DefaultScopes)
	}
	if !slices.Contains(c.Scopes, "openid") {
		return bad("scopes must include openid")
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = DefaultGroupsClaim
	}
	if c.SubjectClaim == "" {
		c.SubjectClaim = DefaultSubjectClaim
	}
	if c.Audience != "" && c.Audience == c.ClientID {
		// ID tokens are issued to the client id; an audience equal to it
		// could not tell them from access tokens (docs/identity.md).
		return bad("the audience must differ from the client id: ID tokens are issued to the client id and are never bearer credentials")
	}
	for g := range c.PublisherHosts {
		if slices.Contains(c.AdminGroups, g) {
			return bad("group %q is both an admin and a publisher group", g)
		}
	}
	if c.Name == "" {
		u, _ := url.Parse(c.Issuer)
		c.Name = u.Hostname()
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	return nil
}

// checkProviderURL is the rule for the issuer and every endpoint its
// discovery names: an absolute https URL, or http on a loopback host. The
// provider is the operator's choice, so a private address is allowed
// (unlike a card URL, docs/security.md "Single sign-on").
func checkProviderURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return fmt.Errorf("%q is not an absolute URL without userinfo, query or fragment", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%q: http is allowed only on a loopback host; use https", raw)
	}
	return fmt.Errorf("%q: the scheme must be https", raw)
}

func isLoopbackHost(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}

// loopbackOnly refuses a connection to anything but a loopback address:
// the dial guard of an http provider, so a name like localhost that
// resolves elsewhere is not trusted with plain HTTP.
func loopbackOnly(_, address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Unmap().IsLoopback() {
		return fmt.Errorf("identity: %s is not a loopback address; an http provider must be on loopback", address)
	}
	return nil
}
