package cardurl

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Hosts under these names never resolve on the public internet
// (docs/threats.md A.3). localhost is loopback by definition (RFC 6761).
var (
	loopbackNames   = []string{"localhost"}
	nonPublicSuffix = []string{"local", "internal", "arpa", "onion", "test", "invalid", "example", "alt"}
)

// normalizeHost returns the lowercase ASCII host, and the address when the
// host is an IP literal accepted by the policy.
func normalizeHost(h string, pol Policy) (string, netip.Addr, error) {
	if h == "" {
		return "", netip.Addr{}, urlErr(CodeInvalid, "the card URL has no host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return checkIPLiteral(a, pol)
	}
	if strings.ContainsAny(h, "%[]") {
		return "", netip.Addr{}, urlErr(CodeInvalid, "the host is not a valid name or address")
	}
	// One trailing dot is the same name (docs/api.md "Agent identity"); two are not.
	h = strings.TrimSuffix(h, ".")
	if a, ok := parseLegacyIPv4(h); ok {
		// 2130706433, 0x7f.1, 0177.0.0.1, 127.1 (docs/threats.md A.2): never
		// let inet_aton spellings reach a resolver.
		if IsReserved(a) {
			return "", netip.Addr{}, urlErr(CodeReserved, "the host is a non-canonical spelling of the reserved address "+a.String())
		}
		return "", netip.Addr{}, urlErr(CodeInvalid, "the host is a non-canonical IP address spelling")
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return "", netip.Addr{}, urlErr(CodeInvalid, "the host is not a valid internationalized domain name")
	}
	if err := checkHostname(ascii); err != nil {
		return "", netip.Addr{}, err
	}
	return ascii, netip.Addr{}, nil
}

func checkIPLiteral(a netip.Addr, pol Policy) (string, netip.Addr, error) {
	if a.Zone() != "" {
		return "", netip.Addr{}, urlErr(CodeInvalid, "IPv6 zones are not allowed")
	}
	a = a.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	for _, p := range pol.AllowNetworks {
		if p.Contains(a) {
			return a.String(), a, nil
		}
	}
	if IsReserved(a) {
		return "", netip.Addr{}, urlErr(CodeReserved, "the address "+a.String()+" is in a reserved range")
	}
	return "", netip.Addr{}, urlErr(CodeInvalid, "IP address literals are not accepted; submit a domain name")
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

// checkHostname enforces docs/threats.md A.3–A.5 on an IDNA ASCII name.
func checkHostname(h string) error {
	if len(h) > 253 {
		return urlErr(CodeInvalid, "the host name is longer than 253 bytes")
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		if h == "localhost" {
			return urlErr(CodeReserved, "localhost is a loopback name")
		}
		return urlErr(CodeInvalid, "single-label host names are not public")
	}
	if len(labels) > 10 {
		return urlErr(CodeInvalid, "the host name has more than 10 labels")
	}
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return err
		}
	}
	tld := labels[len(labels)-1]
	if strings.Trim(tld, "0123456789") == "" {
		return urlErr(CodeInvalid, "the top-level domain is all-numeric")
	}
	for _, n := range loopbackNames {
		if h == n || strings.HasSuffix(h, "."+n) {
			return urlErr(CodeReserved, "localhost names are loopback")
		}
	}
	for _, n := range nonPublicSuffix {
		if h == n || strings.HasSuffix(h, "."+n) {
			return urlErr(CodeInvalid, "."+n+" names are not public")
		}
	}
	if _, icann := publicsuffix.PublicSuffix(tld); !icann {
		return urlErr(CodeInvalid, "the host does not end in a public top-level domain")
	}
	if ps, _ := publicsuffix.PublicSuffix(h); ps == h {
		return urlErr(CodeInvalid, "the host is a public suffix ("+h+"), not a registrable name")
	}
	return nil
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return urlErr(CodeInvalid, "the host name has an empty label")
	case len(l) > 63:
		return urlErr(CodeInvalid, "a host name label is longer than 63 bytes")
	case l[0] == '-' || l[len(l)-1] == '-':
		return urlErr(CodeInvalid, "a host name label starts or ends with a hyphen")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return urlErr(CodeInvalid, "the host name has a character outside letters, digits and hyphens")
		}
	}
	if len(l) >= 4 && l[2:4] == "--" {
		// R-LDH labels are reserved; only valid A-labels (xn--) may use them.
		if l[:2] != "xn" {
			return urlErr(CodeInvalid, "the label "+l+" has hyphens in the third and fourth positions")
		}
		if _, err := idna.Lookup.ToUnicode(l); err != nil {
			return urlErr(CodeInvalid, "the label "+l+" is not a valid IDNA A-label")
		}
	}
	return nil
}

// CanonicalHost spells a host the way Normalize records it (URL.Host), for
// comparing a host typed elsewhere (a publisher token's scope) with agents'
// hosts: an IP literal in its canonical form, a name lowercased in IDNA
// ASCII without a trailing dot. It does not judge whether the host is
// acceptable for a card URL; ok is false when it is not a host at all.
func CanonicalHost(h string) (string, bool) {
	h = strings.TrimSuffix(strings.TrimSpace(h), ".")
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && a.Zone() == "" {
		return a.Unmap().String(), true
	}
	if h == "" || checkCharacters(h) != nil {
		return "", false
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil || strings.ContainsAny(ascii, "/:@") {
		return "", false
	}
	return ascii, true
}

// HostKey is the one spelling of a host that per-host budgets are keyed on
// (docs/security.md "Per-host politeness", docs/threats.md K.100): every
// spelling that reaches the same host maps to one key. It takes a host as
// a URL carries it (with or without IPv6 brackets, any case, a trailing
// dot, Unicode or IDNA ASCII) or a whole URL, and answers the canonical
// IP literal (IPv4-mapped IPv6 unmapped; the inet_aton forms 127.1,
// 0x7f.0.0.1, 2130706433, which a system resolver would accept, read as
// the IPv4 address they spell) or the lowercase IDNA ASCII name without
// its trailing dot. Unlike Normalize it judges nothing: a host it cannot
// read keys as its lowercase self.
func HostKey(host string) string {
	h := strings.TrimSpace(host)
	if i := strings.Index(h, "://"); i >= 0 {
		if u, err := url.Parse(h); err == nil {
			h = u.Host
		} else {
			h = h[i+3:]
			if j := strings.IndexAny(h, "/?#"); j >= 0 {
				h = h[:j]
			}
		}
	}
	if i := strings.LastIndex(h, "@"); i >= 0 {
		h = h[i+1:]
	}
	if hp, _, err := net.SplitHostPort(h); err == nil {
		h = hp
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone("").Unmap().String()
	}
	if a, ok := parseLegacyIPv4(h); ok {
		return a.String()
	}
	if k, ok := CanonicalHost(h); ok {
		return k
	}
	return strings.ToLower(h)
}

// RegistrableDomain is the registrable domain (eTLD+1) of a host as
// Normalize records it, or the host itself when it has none (an IP
// literal, a bare public suffix): the unit the daily bound of automatic
// approvals counts by (docs/claims.md), as DomainKey, its spelling for a
// URL as typed, is for submissions.
func RegistrableDomain(host string) string {
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return host
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}
