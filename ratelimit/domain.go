package ratelimit

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// DomainKey is the per-domain submission key of a card URL as a client
// typed it: the registrable domain (eTLD+1) of its host, or the host itself
// when it has none (an IP literal, a bare public suffix). A bare host and
// its https:// URL give the same key, as the registry stores them as the
// same agent; the registry judges whether the URL is acceptable at all.
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
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}
