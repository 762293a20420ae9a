package agentcard

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// dangerousSchemes run code or read local data when a browser follows them
// (docs/threats.md C.34, H.73).
var dangerousSchemes = []string{
	"javascript", "vbscript", "livescript", "data", "file", "blob", "filesystem",
	"view-source", "about", "jar",
}

// RenderableURL reports whether s may become a link in the UI or a URL the
// API presents as followable (docs/threats.md C.34): an absolute https URL
// with a host, no userinfo, no whitespace, control, bidi or zero-width
// characters, no backslashes, at most MaxURLBytes long. Everything else is
// shown as text.
func RenderableURL(s string) bool {
	if s == "" || len(s) > MaxURLBytes || strings.IndexFunc(s, unsafeURLRune) >= 0 || strings.ContainsRune(s, '\\') {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	return u.Scheme == "https" && u.Opaque == "" && u.Host != "" && u.Hostname() != "" && u.User == nil
}

func unsafeURLRune(r rune) bool {
	return isControl(r) || unicode.IsSpace(r) || isBidiControl(r) || isZeroWidth(r)
}

// schemeOf returns the lowercased scheme of s after removing every
// character a browser ignores or strips there, so "JaVaScRiPt:",
// " java\tscript:" and "java\u0000script:" all read as javascript.
func schemeOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == ':' {
			return strings.ToLower(b.String())
		}
		if unsafeURLRune(r) {
			continue
		}
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return ""
		}
		b.WriteRune(r)
	}
	return ""
}

// urlForm says which forms a URL field may take besides absolute https.
type urlForm uint8

const (
	urlPlain    urlForm = iota
	urlEndpoint         // interface URLs: gRPC may be host:port (docs/cards.md, main)
)

// checkURL flags a URL field; s is never changed (C.34: stored as written).
// It returns the host the URL names ("" when it names none).
func (n *normalizer) checkURL(ptr, s string, form urlForm, binding string) string {
	if len(s) > MaxURLBytes {
		n.c.warn(ptr, CodeTooLong, "URL of %d bytes, more than the %d allowed", len(s), MaxURLBytes)
	}
	if sc := schemeOf(s); sc != "" && slices.Contains(dangerousSchemes, sc) {
		n.c.warn(ptr, CodeDangerousURL, "the %q scheme is never rendered as a link", sc)
		return ""
	}
	if strings.IndexFunc(s, unsafeURLRune) >= 0 || strings.ContainsRune(s, '\\') {
		n.c.warn(ptr, CodeURLControlChars, "URL contains whitespace, control, invisible characters or backslashes")
		return ""
	}
	if strings.HasPrefix(s, "//") {
		n.c.warn(ptr, CodeSchemeRelativeURL, "scheme-relative URL; an absolute https URL is expected")
		return ""
	}
	if form == urlEndpoint && strings.EqualFold(binding, "GRPC") {
		if h, ok := hostPort(s); ok {
			return h
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		n.c.warn(ptr, CodeInvalidURL, "not a valid URL")
		return ""
	}
	switch {
	case u.Scheme == "":
		n.c.warn(ptr, CodeRelativeURL, "relative URL; an absolute https URL is expected")
		return ""
	case u.Scheme == "http":
		n.c.warn(ptr, CodeInsecureURL, "http URL; https is expected")
	case u.Scheme != "https":
		n.c.warn(ptr, CodeUnsupportedURL, "the %q scheme is not https", u.Scheme)
	}
	if (u.Scheme == "http" || u.Scheme == "https") && (u.Opaque != "" || u.Hostname() == "") {
		n.c.warn(ptr, CodeInvalidURL, "URL has no host")
		return ""
	}
	if u.User != nil {
		n.c.warn(ptr, CodeURLUserinfo, "URL carries a user name or password")
	}
	if placeholder(s) || !hostName(u.Hostname()) {
		// https://<LOOKER_URL>/api, {host}, ${HOST}: a template never
		// filled in (url.Parse accepts <…> as a host).
		n.c.warn(ptr, CodePlaceholderURL, "URL holds a placeholder, not an address")
		return ""
	}
	if p := u.Port(); p != "" {
		if v, err := strconv.Atoi(p); err != nil || v < 1 || v > 65535 {
			n.c.warn(ptr, CodeInvalidPort, "port %s is not 1–65535", p)
			return ""
		}
	}
	return normHost(u.Hostname())
}

// placeholder reports template markers in a URL: <…>, {…}, ${…}.
func placeholder(s string) bool {
	return strings.ContainsAny(s, "<>{}") || strings.Contains(s, "${")
}

// hostName reports whether h is an IP literal or a DNS name (letters,
// digits, '-', '_' and dots; IDNs arrive as punycode or UTF-8 letters).
func hostName(h string) bool {
	if h == "" {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	for _, r := range h {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// hostPort accepts the gRPC endpoint form "host:port".
func hostPort(s string) (string, bool) {
	h, p, err := net.SplitHostPort(s)
	if err != nil || h == "" || p == "" || strings.ContainsAny(h, "/?#@") {
		return "", false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return normHost(h), true
}

func normHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// checkEndpointHost flags an interface URL whose host is not the card's
// host (docs/threats.md C.35: the registry vouches for the card's host only),
// and one naming a loopback, private or link-local address.
func (n *normalizer) checkEndpointHost(ptr, host string) {
	if host == "" || host == n.cardHost {
		return
	}
	if n.cardHost != "" {
		n.c.warn(ptr, CodeOffHostInterface, "endpoint host %q is not the card's host %q", host, n.cardHost)
	}
	if internalHost(host) {
		n.c.warn(ptr, CodeInternalAddress, "endpoint %q is a loopback, private or link-local address", host)
	}
}

func internalHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified()
}

// cardHostOf returns the normalized host of the card URL, "" when unknown.
func cardHostOf(cardURL string) string {
	if cardURL == "" {
		return ""
	}
	u, err := url.Parse(cardURL)
	if err != nil {
		return ""
	}
	return normHost(u.Hostname())
}
