package crawler

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/fetch"
)

// TargetFor turns what a person types (`cardex crawl`) into a Target by the
// same card-URL rule a submission goes through (cardurl.Normalize), so the
// command and POST /agents agree on every URL: a bare hostname means its
// well-known card with the legacy fallback, the identity is spelled the
// same way, and a loopback name or a reserved IP literal is refused before
// anything is resolved. Errors wrap ErrBadURL or ErrUnsupportedScheme; a
// URL the policy refuses (a reserved address, http:// without
// AllowInsecureHTTP) is a *FetchError of class blocked_address, as the
// fetcher would report it, and no request is sent.
func TargetFor(raw string, p fetch.Policy) (Target, error) {
	raw = strings.TrimSpace(raw)
	scheme, _, hasScheme := strings.Cut(raw, "://")
	scheme = strings.ToLower(scheme)
	switch {
	case !hasScheme || scheme == "https":
	case scheme == "http":
		if !p.AllowInsecureHTTP {
			return Target{}, &fetch.FetchError{Class: fetch.ClassBlockedAddress, Hop: truncate(raw, 200), Err: fetch.ErrSchemeNotAllowed}
		}
	default:
		return Target{}, wrapf(fetch.ErrUnsupportedScheme, "%q", truncate(scheme, 40))
	}
	u, err := cardurl.Normalize(raw, cardurl.Policy{AllowInsecureHTTP: p.AllowInsecureHTTP, AllowNetworks: p.AllowNetworks})
	var ue *cardurl.Error
	switch {
	case errors.As(err, &ue) && ue.Code == cardurl.CodeReserved:
		refused := wrapf(fetch.ErrReservedAddress, "%s", ue.Reason)
		if a, ok := literalHost(raw); ok {
			// Worded as the dial check words it, naming the address.
			refused = fmt.Errorf("%w %s", fetch.ErrReservedAddress, a)
		}
		return Target{}, &fetch.FetchError{Class: fetch.ClassBlockedAddress, Hop: truncate(raw, 200), Err: refused}
	case errors.As(err, &ue):
		return Target{}, wrapf(fetch.ErrBadURL, "%s", ue.Reason)
	case err != nil:
		return Target{}, wrapf(fetch.ErrBadURL, "%v", err)
	}
	return Target{CardURL: u.URL, BareHost: u.BareHost}, nil
}

// literalHost is the IP literal a URL names as its host, if any.
func literalHost(raw string) (netip.Addr, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
