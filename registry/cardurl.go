package registry

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"code.dny.dev/ssrf"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// wellKnownPath is where a bare host's card lives (CONTRACT.md §1).
const wellKnownPath = "/.well-known/agent-card.json"

// cardURL is a submitted URL after normalization (CONTRACT.md §1).
type cardURL struct {
	URL      string // the identity: scheme://host[:port]/path[?query]
	Host     string // lowercase ASCII host without port or brackets
	BareHost bool   // the path was empty or "/": the legacy fallback applies
}

// Hosts under these names never resolve on the public internet
// (RELIABILITY.md A.3). localhost is loopback by definition (RFC 6761).
var (
	loopbackNames   = []string{"localhost"}
	nonPublicSuffix = []string{"local", "internal", "arpa", "onion", "test", "invalid", "example", "alt"}
)

func urlErr(code, reason string) error { return &URLError{Code: code, Reason: reason} }

// normalizeCardURL applies CONTRACT.md §1 and the submission side of §2 and
// RELIABILITY.md A.1–A.5. A string without a scheme is accepted only when it
// is a bare hostname ("a.com" means https://a.com/.well-known/agent-card.json);
// anything else needs an explicit https:// (or http:// when allowed).
func normalizeCardURL(raw string, pol URLPolicy) (cardURL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return cardURL{}, urlErr(URLCodeInvalid, "the card URL is empty")
	}
	if len(raw) > 2048 {
		return cardURL{}, urlErr(URLCodeInvalid, "the card URL is longer than 2048 bytes")
	}
	if err := checkCharacters(raw); err != nil {
		return cardURL{}, err
	}
	if !strings.Contains(raw, "://") {
		if strings.ContainsAny(raw, "/:@?#[]\\") {
			return cardURL{}, urlErr(URLCodeInvalid, "the card URL needs a scheme (https://)")
		}
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return cardURL{}, urlErr(URLCodeInvalid, "the card URL does not parse")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && pol.AllowInsecureHTTP:
	case u.Scheme == "http":
		return cardURL{}, urlErr(URLCodeInvalid, "only https card URLs are accepted")
	default:
		return cardURL{}, urlErr(URLCodeInvalid, "the scheme must be https")
	}
	if u.Opaque != "" || u.Host == "" {
		return cardURL{}, urlErr(URLCodeInvalid, "the card URL has no host")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return cardURL{}, urlErr(URLCodeInvalid, "user information is not allowed in a card URL")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return cardURL{}, urlErr(URLCodeInvalid, "a fragment is not allowed in a card URL")
	}
	host, ipHost, err := normalizeHost(u.Hostname(), pol)
	if err != nil {
		return cardURL{}, err
	}
	port, err := normalizePort(u, ipHost, pol)
	if err != nil {
		return cardURL{}, err
	}
	path, err := normalizeEscapes(u.EscapedPath())
	if err != nil {
		return cardURL{}, err
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." { // also "%2E" and "%2E%2E", decoded above
			return cardURL{}, urlErr(URLCodeInvalid, "dot segments are not allowed in a card URL path")
		}
	}
	bare := path == "" || path == "/"
	if bare {
		path = wellKnownPath
	}
	query, err := normalizeEscapes(u.RawQuery)
	if err != nil {
		return cardURL{}, err
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
	return cardURL{URL: out, Host: host, BareHost: bare}, nil
}

// checkCharacters rejects control characters, whitespace, and the invisible
// characters that make two URLs look alike (RELIABILITY.md A.5: BOM, bidi
// overrides such as RLO, zero-width characters). IDNA mapping would silently
// drop some of them, so they are refused before it runs.
func checkCharacters(s string) error {
	if !utf8.ValidString(s) {
		return urlErr(URLCodeInvalid, "the card URL is not valid UTF-8")
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || unicode.IsSpace(r):
			return urlErr(URLCodeInvalid, "the card URL contains whitespace or control characters")
		case r == 0xFEFF || r == 0xAD || (r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) ||
			(r >= 0x2060 && r <= 0x2069) || r == 0x061C || r == 0x180E || unicode.Is(unicode.Cf, r):
			return urlErr(URLCodeInvalid, "the card URL contains invisible or bidirectional formatting characters")
		}
	}
	return nil
}

// normalizeHost returns the lowercase ASCII host, and the address when the
// host is an IP literal accepted by the policy.
func normalizeHost(h string, pol URLPolicy) (string, netip.Addr, error) {
	if h == "" {
		return "", netip.Addr{}, urlErr(URLCodeInvalid, "the card URL has no host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return checkIPLiteral(a, pol)
	}
	if strings.ContainsAny(h, "%[]") {
		return "", netip.Addr{}, urlErr(URLCodeInvalid, "the host is not a valid name or address")
	}
	// One trailing dot is the same name (CONTRACT.md §1); two are not.
	h = strings.TrimSuffix(h, ".")
	if a, ok := parseLegacyIPv4(h); ok {
		// 2130706433, 0x7f.1, 0177.0.0.1, 127.1 (RELIABILITY.md A.2): never
		// let inet_aton spellings reach a resolver.
		if reserved(a) {
			return "", netip.Addr{}, urlErr(URLCodeReserved, "the host is a non-canonical spelling of the reserved address "+a.String())
		}
		return "", netip.Addr{}, urlErr(URLCodeInvalid, "the host is a non-canonical IP address spelling")
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return "", netip.Addr{}, urlErr(URLCodeInvalid, "the host is not a valid internationalized domain name")
	}
	if err := checkHostname(ascii); err != nil {
		return "", netip.Addr{}, err
	}
	return ascii, netip.Addr{}, nil
}

func reserved(a netip.Addr) bool {
	return ssrf.New(ssrf.WithAnyPort()).SafeAddr(a.Unmap()) != nil
}

func checkIPLiteral(a netip.Addr, pol URLPolicy) (string, netip.Addr, error) {
	if a.Zone() != "" {
		return "", netip.Addr{}, urlErr(URLCodeInvalid, "IPv6 zones are not allowed")
	}
	a = a.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	for _, p := range pol.AllowNetworks {
		if p.Contains(a) {
			return a.String(), a, nil
		}
	}
	if reserved(a) {
		return "", netip.Addr{}, urlErr(URLCodeReserved, "the address "+a.String()+" is in a reserved range")
	}
	return "", netip.Addr{}, urlErr(URLCodeInvalid, "IP address literals are not accepted; submit a domain name")
}

// parseLegacyIPv4 recognizes the inet_aton forms: one to four parts, each
// decimal, octal (leading 0) or hex (0x), the last part filling the
// remaining bytes.
func parseLegacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// checkHostname enforces RELIABILITY.md A.3–A.5 on an IDNA ASCII name.
func checkHostname(h string) error {
	if len(h) > 253 {
		return urlErr(URLCodeInvalid, "the host name is longer than 253 bytes")
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		if h == "localhost" {
			return urlErr(URLCodeReserved, "localhost is a loopback name")
		}
		return urlErr(URLCodeInvalid, "single-label host names are not public")
	}
	if len(labels) > 10 {
		return urlErr(URLCodeInvalid, "the host name has more than 10 labels")
	}
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return err
		}
	}
	tld := labels[len(labels)-1]
	if strings.Trim(tld, "0123456789") == "" {
		return urlErr(URLCodeInvalid, "the top-level domain is all-numeric")
	}
	for _, n := range loopbackNames {
		if h == n || strings.HasSuffix(h, "."+n) {
			return urlErr(URLCodeReserved, "localhost names are loopback")
		}
	}
	for _, n := range nonPublicSuffix {
		if h == n || strings.HasSuffix(h, "."+n) {
			return urlErr(URLCodeInvalid, "."+n+" names are not public")
		}
	}
	if _, icann := publicsuffix.PublicSuffix(tld); !icann {
		return urlErr(URLCodeInvalid, "the host does not end in a public top-level domain")
	}
	if ps, _ := publicsuffix.PublicSuffix(h); ps == h {
		return urlErr(URLCodeInvalid, "the host is a public suffix ("+h+"), not a registrable name")
	}
	return nil
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return urlErr(URLCodeInvalid, "the host name has an empty label")
	case len(l) > 63:
		return urlErr(URLCodeInvalid, "a host name label is longer than 63 bytes")
	case l[0] == '-' || l[len(l)-1] == '-':
		return urlErr(URLCodeInvalid, "a host name label starts or ends with a hyphen")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return urlErr(URLCodeInvalid, "the host name has a character outside letters, digits and hyphens")
		}
	}
	if len(l) >= 4 && l[2:4] == "--" {
		// R-LDH labels are reserved; only valid A-labels (xn--) may use them.
		if l[:2] != "xn" {
			return urlErr(URLCodeInvalid, "the label "+l+" has hyphens in the third and fourth positions")
		}
		if _, err := idna.Lookup.ToUnicode(l); err != nil {
			return urlErr(URLCodeInvalid, "the label "+l+" is not a valid IDNA A-label")
		}
	}
	return nil
}

// normalizePort drops the default port; any other port is allowed only where
// CONTRACT.md §2 lets the crawler dial it: an IP literal inside an allowed
// network, or a name when allowed networks are configured (the dial-time
// check then refuses a non-443 port on an address outside them).
func normalizePort(u *url.URL, ip netip.Addr, pol URLPolicy) (string, error) {
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", urlErr(URLCodeInvalid, "the port is empty")
		}
		return "", nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", urlErr(URLCodeInvalid, "the port is not a number between 1 and 65535")
	}
	if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
		return "", nil
	}
	if ip.IsValid() || len(pol.AllowNetworks) > 0 {
		return strconv.Itoa(n), nil
	}
	return "", urlErr(URLCodeInvalid, "only the default port is accepted")
}

// normalizeEscapes decodes percent-escapes of unreserved characters and
// upper-cases the hex of the others (CONTRACT.md §1, RFC 3986 §6.2.2).
func normalizeEscapes(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", urlErr(URLCodeInvalid, "the card URL has a malformed percent-escape")
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
