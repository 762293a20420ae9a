package cardurl

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// DomainKey is the per-domain submission key of a card URL as a client
// typed it: the registrable domain (eTLD+1) of its host, or the host itself
// when it has none (an IP literal, a bare public suffix). A bare host and
// its https:// URL give the same key, as the registry stores them as the
// same agent; the registry judges whether the URL is acceptable at all.
// Submissions are counted by it (ratelimit, docs/threats.md A.8) and a
// catalog speaks for the agents of its own domain only (crawler).
func DomainKey(cardURL string) string {
	raw := strings.TrimSpace(cardURL)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "invalid"
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if net.ParseIP(host) != nil {
		return host
	}
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		host = a
	}
	return RegistrableDomain(host)
}
