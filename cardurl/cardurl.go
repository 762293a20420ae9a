// Package cardurl is the one rule for card URLs and reserved addresses:
// how a card URL is normalized into an agent's identity, which URLs are
// refused before anything is resolved, and which addresses are never dialed
// (docs/api.md "Agent identity", docs/security.md "Network policy"). The
// registry (submissions, host claims), the crawler (dial-time checks,
// `cardex crawl`) and the CLI all call it. It is a leaf: it imports nothing
// of Cardex.
package cardurl

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Where a card lives on a host (docs/api.md "Agent identity").
const (
	// WellKnownPath is a bare host's card.
	WellKnownPath = "/.well-known/agent-card.json"
	// LegacyPath is where cards lived before A2A v0.3 renamed the file.
	// Only a bare-host URL falls back to it.
	LegacyPath = "/.well-known/agent.json"
)

// Policy is the network policy as it applies to a URL before anything is
// resolved: which schemes, ports and IP literals are acceptable.
type Policy struct {
	AllowInsecureHTTP bool           // http:// is acceptable (--allow-insecure-http)
	AllowNetworks     []netip.Prefix // IP literals in these ranges, on any port (--allow-networks)
}

// URL is a card URL after normalization.
type URL struct {
	URL      string // the identity: scheme://host[:port]/path[?query]
	Host     string // lowercase ASCII host without port or brackets
	BareHost bool   // the path was empty or "/": the legacy fallback applies
}

// Error codes, which are also the API's problem slugs.
const (
	CodeInvalid  = "invalid-url"
	CodeReserved = "reserved-address"
)

// ErrInvalid is what every *Error is (errors.Is).
var ErrInvalid = errors.New("invalid card URL")

// Error refuses a card URL.
type Error struct {
	Code   string // CodeInvalid or CodeReserved
	Reason string
}

func (e *Error) Error() string { return e.Code + ": " + e.Reason }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func urlErr(code, reason string) error { return &Error{Code: code, Reason: reason} }

// Normalize is the card-URL rule (docs/api.md "Agent identity"): what a
// submission, a host claim and `cardex crawl` accept, and the one spelling
// of an agent's identity. A string without a scheme is accepted only when it
// is a bare hostname ("a.com" means https://a.com/.well-known/agent-card.json);
// anything else needs an explicit https:// (or http:// when allowed). Names
// that are loopback by definition and IP literals in reserved ranges are
// refused with CodeReserved before anything is resolved.
func Normalize(raw string, pol Policy) (URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return URL{}, urlErr(CodeInvalid, "the card URL is empty")
	}
	if len(raw) > 2048 {
		return URL{}, urlErr(CodeInvalid, "the card URL is longer than 2048 bytes")
	}
	if err := checkCharacters(raw); err != nil {
		return URL{}, err
	}
	if !strings.Contains(raw, "://") {
		if strings.ContainsAny(raw, "/:@?#[]\\") {
			return URL{}, urlErr(CodeInvalid, "the card URL needs a scheme (https://)")
		}
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return URL{}, urlErr(CodeInvalid, "the card URL does not parse")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && pol.AllowInsecureHTTP:
	case u.Scheme == "http":
		return URL{}, urlErr(CodeInvalid, "only https card URLs are accepted")
	default:
		return URL{}, urlErr(CodeInvalid, "the scheme must be https")
	}
	if u.Opaque != "" || u.Host == "" {
		return URL{}, urlErr(CodeInvalid, "the card URL has no host")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return URL{}, urlErr(CodeInvalid, "user information is not allowed in a card URL")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return URL{}, urlErr(CodeInvalid, "a fragment is not allowed in a card URL")
	}
	host, ipHost, err := normalizeHost(u.Hostname(), pol)
	if err != nil {
		return URL{}, err
	}
	port, err := normalizePort(u, ipHost, pol)
	if err != nil {
		return URL{}, err
	}
	path, err := normalizeEscapes(u.EscapedPath())
	if err != nil {
		return URL{}, err
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." { // also "%2E" and "%2E%2E", decoded above
			return URL{}, urlErr(CodeInvalid, "dot segments are not allowed in a card URL path")
		}
	}
	bare := path == "" || path == "/"
	if bare {
		path = WellKnownPath
	}
	query, err := normalizeEscapes(u.RawQuery)
	if err != nil {
		return URL{}, err
	}
	authority := host
	if ipHost.Is6() {
		authority = "[" + host + "]"
	}
	if port != "" {
		authority += ":" + port
	}
	out := u.Scheme + "://" + authority + path
	if query != "" {
		out += "?" + query
	}
	return URL{URL: out, Host: host, BareHost: bare}, nil
}

// checkCharacters rejects control characters, whitespace, and the invisible
// characters that make two URLs look alike (docs/threats.md A.5: BOM, bidi
// overrides such as RLO, zero-width characters). IDNA mapping would silently
// drop some of them, so they are refused before it runs.
func checkCharacters(s string) error {
	if !utf8.ValidString(s) {
		return urlErr(CodeInvalid, "the card URL is not valid UTF-8")
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || unicode.IsSpace(r):
			return urlErr(CodeInvalid, "the card URL contains whitespace or control characters")
		case r == 0xFEFF || r == 0xAD || (r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) ||
			(r >= 0x2060 && r <= 0x2069) || r == 0x061C || r == 0x180E || unicode.Is(unicode.Cf, r):
			return urlErr(CodeInvalid, "the card URL contains invisible or bidirectional formatting characters")
		}
	}
	return nil
}

// normalizePort drops the default port; any other port is allowed only where
// docs/security.md "Network policy" lets the crawler dial it: an IP literal inside an allowed
// network, or a name when allowed networks are configured (the dial-time
// check then refuses a non-443 port on an address outside them).
func normalizePort(u *url.URL, ip netip.Addr, pol Policy) (string, error) {
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", urlErr(CodeInvalid, "the port is empty")
		}
		return "", nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", urlErr(CodeInvalid, "the port is not a number between 1 and 65535")
	}
	if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
		return "", nil
	}
	if ip.IsValid() || len(pol.AllowNetworks) > 0 {
		return strconv.Itoa(n), nil
	}
	return "", urlErr(CodeInvalid, "only the default port is accepted")
}

// normalizeEscapes decodes percent-escapes of unreserved characters and
// upper-cases the hex of the others (docs/api.md "Agent identity", RFC 3986 §6.2.2).
func normalizeEscapes(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", urlErr(CodeInvalid, "the card URL has a malformed percent-escape")
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteString("%" + strings.ToUpper(s[i+1:i+3]))
		}
		i += 2
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// Origin is the origin (scheme://host[:port]) of a URL that Normalize
// produced, spelled as Normalize spells it (the default port left out):
// what a host claim's token is scoped to (docs/claims.md). It is "" for a
// string that has no "scheme://authority".
func Origin(normalized string) string {
	i := strings.Index(normalized, "://")
	if i <= 0 {
		return ""
	}
	rest := normalized[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if rest == "" {
		return ""
	}
	return normalized[:i+3] + rest
}
