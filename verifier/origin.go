package verifier

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// origin is scheme, host and port of the agent's card URL (docs/api.md "Agent identity").
// Which schemes and ports are acceptable is the caller's network policy
// (docs/security.md "Network policy"); the verifier only checks that key URLs share the origin.
type origin struct {
	scheme, host, port string
}

var errBadOrigin = errors.New("not an http(s) origin")

func parseOrigin(s string) (origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return origin{}, err
	}
	return originOf(u)
}

func originOf(u *url.URL) (origin, error) {
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "https" && scheme != "http") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return origin{}, errBadOrigin
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = "443"
		if scheme == "http" {
			port = "80"
		}
	}
	if host == "" {
		return origin{}, errBadOrigin
	}
	return origin{scheme: scheme, host: strings.TrimSuffix(host, "."), port: port}, nil
}

// String is the origin in URL form, the default port left out.
func (o origin) String() string {
	def := (o.scheme == "https" && o.port == "443") || (o.scheme == "http" && o.port == "80")
	if def {
		if strings.Contains(o.host, ":") {
			return o.scheme + "://[" + o.host + "]"
		}
		return o.scheme + "://" + o.host
	}
	return o.scheme + "://" + net.JoinHostPort(o.host, o.port)
}

// wellKnownJWKS is the third trusted key source (docs/security.md "Network policy").
func (o origin) wellKnownJWKS() string { return o.String() + "/.well-known/jwks.json" }

// contains reports whether rawURL is an absolute URL on this origin. A jku
// elsewhere would let the signer choose its own trust root (A2A#2096,
// docs/threats.md D.43, D.50).
func (o origin) contains(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	other, err := originOf(u)
	return err == nil && other == o
}

// NormalizeOrigin returns the origin (scheme://host[:port]) of an http(s)
// URL, or an error when s has none. Whether the scheme and port are
// acceptable is the caller's network policy (docs/security.md "Network policy").
func NormalizeOrigin(s string) (string, error) {
	o, err := parseOrigin(s)
	if err != nil {
		return "", err
	}
	return o.String(), nil
}
