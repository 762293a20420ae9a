package fetch

import (
	"errors"
	"fmt"
	"net/http"
)

// Error classes recorded on a failed fetch (docs/security.md "Network policy"). The fetcher
// assigns the first ten; callers that parse the body assign ClassNotJSON,
// ClassNotACard and ClassInvalidCard.
const (
	ClassDNS                 = "dns"
	ClassBlockedAddress      = "blocked_address"
	ClassConnect             = "connect"
	ClassTLS                 = "tls"
	ClassTimeout             = "timeout"
	ClassTooLarge            = "too_large"
	ClassCrossOriginRedirect = "cross_origin_redirect"
	ClassRedirectLoop        = "redirect_loop"
	ClassTooManyRedirects    = "too_many_redirects"
	ClassHTTPStatus          = "http_status"
	ClassNotJSON             = "not_json"
	ClassNotACard            = "not_a_card"
	ClassInvalidCard         = "invalid_card"
)

// Sentinel errors wrapped by FetchError.Err, for callers that need more than
// the class (errors.Is).
var (
	// ErrReservedAddress: the address is in an IANA special-purpose range or
	// multicast and not inside Policy.AllowNetworks (docs/threats.md B.11, B.12).
	ErrReservedAddress = errors.New("refusing to connect to reserved address")
	// ErrPortNotAllowed: outside the allowed networks only 443 (and 80 for
	// http:// under AllowInsecureHTTP) may be dialed (B.17).
	ErrPortNotAllowed = errors.New("refusing to connect to a port the network policy does not allow")
	// ErrSchemeNotAllowed: http:// without AllowInsecureHTTP.
	ErrSchemeNotAllowed = errors.New("the network policy allows only https URLs")
	// ErrUnsupportedScheme: anything but http and https (gopher:, file:, ftp:…; B.16).
	ErrUnsupportedScheme = errors.New("unsupported URL scheme")
	// ErrBadURL: the URL cannot be fetched at all (no host, userinfo, a
	// numeric host that some resolvers read as an IPv4 address — A.2).
	ErrBadURL = errors.New("URL cannot be fetched")
	// ErrOffOrigin: the URL is not on the origin the caller required (D.43).
	ErrOffOrigin = errors.New("URL is not on the required origin")
	// ErrNoAddresses: the name resolved to no address at all.
	ErrNoAddresses = errors.New("name has no addresses")

	ErrCrossOriginRedirect = errors.New("redirect to another origin")
	ErrSchemeDowngrade     = errors.New("redirect downgrades https to http")
	ErrRedirectLoop        = errors.New("redirect loop")
	ErrTooManyRedirects    = errors.New("too many redirects")
	// ErrBadLocation: a redirect without a usable Location (missing,
	// unparseable, or longer than MaxLocationBytes; B.16).
	ErrBadLocation = errors.New("redirect has an unusable Location")
	// ErrRedirectNotFollowed: a 3xx where the request does not follow
	// redirects (key sets never do, docs/security.md "Network policy").
	ErrRedirectNotFollowed = errors.New("redirects are not followed for this request")

	ErrConnectTimeout      = errors.New("timeout during connect")
	ErrTLSHandshakeTimeout = errors.New("timeout during TLS handshake")
	ErrHeaderTimeout       = errors.New("timeout waiting for response headers")
	ErrBodyTimeout         = errors.New("timeout while reading the body")

	ErrBodyTooLarge    = errors.New("response body exceeds the limit")
	ErrHeadersTooLarge = errors.New("response headers exceed the limit")
	// ErrPlainHTTPOnTLSPort: the server answered a TLS handshake with plain
	// HTTP (B.23, Boulder's badTLSHeader).
	ErrPlainHTTPOnTLSPort = errors.New("server speaks plain HTTP on a TLS port")

	ErrHTTPStatus = errors.New("unexpected HTTP status")
	ErrNotJSON    = errors.New("response is not JSON")
)

// FetchError is the one error type Fetch returns. Class is one of the Class*
// constants; HTTPStatus is set for ClassHTTPStatus (and for redirects that
// could not be followed); Hop is the URL whose request or redirect failed,
// so a refused redirect names its target (B.15).
type FetchError struct {
	Class      string
	HTTPStatus int
	Hop        string
	Err        error
	// Header holds the response headers of an http_status failure, so the
	// scheduler can honour Retry-After (RetryAfter) on 429 and 503 (B.26).
	Header http.Header
}

func (e *FetchError) Error() string {
	msg := e.Class
	if e.HTTPStatus != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.HTTPStatus)
	}
	if e.Hop != "" {
		msg += ": " + e.Hop
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *FetchError) Unwrap() error { return e.Err }

// ErrorClass returns Class, for callers that must not import this package
// (the registry's host claims read it through an interface).
func (e *FetchError) ErrorClass() string { return e.Class }

// ClassOf returns the class of a *FetchError in err's chain, or "".
func ClassOf(err error) string {
	var fe *FetchError
	if errors.As(err, &fe) {
		return fe.Class
	}
	return ""
}

// addrError is what the dial check returns: the sentinel plus the address,
// so the message names what was refused.
type addrError struct {
	sentinel error
	addr     string
}

func (e *addrError) Error() string { return e.sentinel.Error() + " " + e.addr }
func (e *addrError) Unwrap() error { return e.sentinel }

// wrapf wraps a sentinel with detail: "sentinel: detail".
func wrapf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}
