package api

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/cardexhq/cardex/api/clientaddr"
)

// limitReads applies --read-rate to anonymous reads (RELIABILITY.md I.82).
// It runs after authenticate: a valid token is never limited.
func (s *server) limitReads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		m := c.Request().Method
		if (m == http.MethodGet || m == http.MethodHead) && principal(c).Role == "" {
			if ok, wait := s.read.take(s.clientKey(c.Request()), s.now()); !ok {
				return rateLimited(wait, "too many requests from this address")
			}
		}
		return next(c)
	}
}

// limitSubmission applies --submit-rate to an anonymous submission: per
// client address, then per registrable domain of the submitted host, so one
// client cannot register thousands of subdomains of a victim and many
// clients cannot do it together either (RELIABILITY.md A.8).
func (s *server) limitSubmission(c echo.Context, cardURL string) error {
	if principal(c).Role != "" {
		return nil
	}
	now := s.now()
	if ok, wait := s.submitAddr.take(s.clientKey(c.Request()), now); !ok {
		return rateLimited(wait, "too many submissions from this address")
	}
	if ok, wait := s.submitDomain.take(registrableDomain(cardURL), now); !ok {
		return rateLimited(wait, "too many submissions for this domain")
	}
	return nil
}

// registrableDomain is the eTLD+1 of the submitted host, or the host itself
// when it has none (an IP literal, a bare public suffix); the registry
// judges whether such a URL is acceptable.
func registrableDomain(cardURL string) string {
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

// clientKey is the rate-limit key of r's client (shared with the web UI).
func (s *server) clientKey(r *http.Request) string {
	return clientaddr.Key(clientaddr.Addr(r, s.proxies))
}
