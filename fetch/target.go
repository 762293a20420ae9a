package fetch

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// parseTarget checks a URL against the policy before anything is resolved
// or dialed: scheme, userinfo, host spelling.
func (f *Fetcher) parseTarget(raw string) (*url.URL, *FetchError) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &FetchError{Class: ClassBlockedAddress, Hop: truncate(raw, 200), Err: wrapf(ErrBadURL, "%v", err)}
	}
	if fe := f.checkTarget(u); fe != nil {
		return nil, fe
	}
	return u, nil
}

func (f *Fetcher) checkTarget(u *url.URL) *FetchError {
	hop := u.Redacted()
	fail := func(err error) *FetchError {
		return &FetchError{Class: ClassBlockedAddress, Hop: hop, Err: err}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !f.policy.AllowInsecureHTTP {
			return fail(ErrSchemeNotAllowed)
		}
	default:
		return fail(wrapf(ErrUnsupportedScheme, "%q", u.Scheme))
	}
	if u.User != nil {
		return fail(wrapf(ErrBadURL, "userinfo in URL"))
	}
	if u.Opaque != "" {
		return fail(wrapf(ErrBadURL, "opaque URL"))
	}
	host := u.Hostname()
	if host == "" {
		return fail(wrapf(ErrBadURL, "no host"))
	}
	if _, err := netip.ParseAddr(host); err != nil && numericHost(host) {
		// docs/threats.md A.2: 2130706433, 0x7f.1 or 127.1 must never reach
		// a resolver that applies inet_aton rules.
		return fail(wrapf(ErrBadURL, "host %q is a numeric IPv4 spelling", host))
	}
	u.Fragment, u.RawFragment = "", ""
	return nil
}

// numericHost reports whether the last label is all digits or hex: no
// public suffix looks like that, some resolvers read it as an IPv4 address.
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	l := strings.ToLower(last)
	if strings.HasPrefix(l, "0x") {
		return true
	}
	return strings.Trim(l, "0123456789") == ""
}

// Origin returns scheme://host[:port] of a URL: lowercased, one trailing dot
// removed, default port omitted (docs/api.md "Agent identity"). Keys and redirects are
// checked against it.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return scheme + "://" + host
}

// OriginOf parses a URL and returns its Origin.
func OriginOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", wrapf(ErrBadURL, "no host in %q", truncate(raw, 200))
	}
	return Origin(u), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
