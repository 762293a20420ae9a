package fetch

import (
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// nextHop validates a redirect before anything is resolved or dialed
// (docs/threats.md B.15–B.17, Boulder's extractRequestTarget): each hop is
// checked like the first URL, and the error names the hop.
func (f *Fetcher) nextHop(cur *url.URL, origin string, resp *http.Response, req Request, visited map[string]bool, hops int) (*url.URL, *FetchError) {
	code := resp.StatusCode
	statusErr := func(err error) *FetchError {
		return &FetchError{Class: ClassHTTPStatus, HTTPStatus: code, Hop: cur.Redacted(), Header: resp.Header, Err: err}
	}
	if !req.FollowRedirects {
		return nil, statusErr(ErrRedirectNotFollowed)
	}
	loc := resp.Header.Get("Location")
	switch {
	case loc == "":
		return nil, statusErr(wrapf(ErrBadLocation, "no Location header"))
	case len(loc) > f.policy.MaxLocationBytes:
		return nil, statusErr(wrapf(ErrBadLocation, "Location is %d bytes, limit %d", len(loc), f.policy.MaxLocationBytes))
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, statusErr(wrapf(ErrBadLocation, "%v", err))
	}
	next := cur.ResolveReference(ref)
	next.Fragment, next.RawFragment = "", ""
	hop := truncate(next.Redacted(), 512)
	fail := func(class string, err error) *FetchError {
		return &FetchError{Class: class, HTTPStatus: code, Hop: hop, Err: err}
	}
	scheme := strings.ToLower(next.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fail(ClassBlockedAddress, wrapf(ErrUnsupportedScheme, "%q", next.Scheme))
	}
	if strings.EqualFold(cur.Scheme, "https") && scheme == "http" {
		return nil, fail(ClassCrossOriginRedirect, ErrSchemeDowngrade)
	}
	if Origin(next) != origin && (req.SameOriginOnly || req.Origin != "") {
		// The publisher submits the final URL instead (docs/security.md "Network policy").
		return nil, fail(ClassCrossOriginRedirect, wrapf(ErrCrossOriginRedirect, "from %s", origin))
	}
	if fe := f.checkTarget(next); fe != nil {
		fe.HTTPStatus, fe.Hop = code, hop
		return nil, fe
	}
	// An IP literal target is refused here, before any dial (B.15); names
	// are checked by the dialer on every address they resolve to.
	if ip, err := netip.ParseAddr(next.Hostname()); err == nil {
		if err := f.check(netip.AddrPortFrom(ip, defaultPort(next))); err != nil {
			return nil, fail(ClassBlockedAddress, err)
		}
	}
	key := next.String()
	if visited[key] {
		return nil, fail(ClassRedirectLoop, ErrRedirectLoop)
	}
	if hops+1 > f.policy.MaxRedirects {
		return nil, fail(ClassTooManyRedirects, wrapf(ErrTooManyRedirects, "more than %d", f.policy.MaxRedirects))
	}
	visited[key] = true
	return next, nil
}

// defaultPort is the URL's port, or the scheme's default.
func defaultPort(u *url.URL) uint16 {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	if strings.EqualFold(u.Scheme, "http") {
		return 80
	}
	return 443
}
