package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Errors of the UI itself; registry and search sentinels are mapped too.
var (
	errNotFound    = errors.New("page not found")
	errMethod      = errors.New("method not allowed")
	errCrossOrigin = errors.New("cross-origin request refused")
	errBadRequest  = errors.New("bad request")
	errRateLimited = errors.New("too many requests")
)

// errorPage is what an error page says; Detail never carries internal
// error text (it could hold SQL or paths), only what the visitor can act on.
type errorPage struct {
	Status  int
	Heading string
	Detail  string
}

var errorTable = []struct {
	err  error
	page errorPage
}{
	{errNotFound, errorPage{http.StatusNotFound, "Not found", "There is no page at this address."}},
	{registry.ErrNotFound, errorPage{http.StatusNotFound, "Not found", "There is no agent with this id."}},
	{errMethod, errorPage{http.StatusMethodNotAllowed, "Method not allowed", "This address does not accept that kind of request."}},
	{errCrossOrigin, errorPage{http.StatusForbidden, "Cross-origin request refused", "Forms on this site can only be sent from this site."}},
	{registry.ErrForbidden, errorPage{http.StatusForbidden, "Forbidden", "You may not do this."}},
	{registry.ErrUnauthorized, errorPage{http.StatusUnauthorized, "Sign in required", "Sign in on the admin page first."}},
	{errRateLimited, errorPage{http.StatusTooManyRequests, "Too many requests", "Please wait a minute and try again."}},
	{errBadRequest, errorPage{http.StatusBadRequest, "Bad request", "The request could not be understood."}},
	{search.ErrInvalidQuery, errorPage{http.StatusBadRequest, "Bad search", "The search is too long or not valid text."}},
	{search.ErrInvalidPageToken, errorPage{http.StatusBadRequest, "Bad page link", "This page link belongs to another search. Start again from the first page."}},
	{registry.ErrInvalidPageToken, errorPage{http.StatusBadRequest, "Bad page link", "This page link belongs to another list. Start again from the first page."}},
	{search.ErrNotReady, errorPage{http.StatusServiceUnavailable, "Search is being rebuilt", "The search index is being rebuilt. Try again in a minute."}},
	{search.ErrTimeout, errorPage{http.StatusServiceUnavailable, "Search took too long", "Try a narrower search."}},
	{registry.ErrUnavailable, errorPage{http.StatusServiceUnavailable, "Temporarily unavailable", "The registry cannot answer right now. Try again in a minute."}},
}

// fail renders the error page for err, with the same security headers as
// every other page (RELIABILITY.md H.76). Unknown errors are logged and
// shown as a generic 500.
func (u *ui) fail(w http.ResponseWriter, r *http.Request, err error) {
	p := errorPage{http.StatusInternalServerError, "Something went wrong", "The error has been logged. Try again later."}
	known := false
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			p, known = e.page, true
			break
		}
	}
	if !known {
		u.log.ErrorContext(r.Context(), "web request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if p.Status == http.StatusServiceUnavailable || p.Status == http.StatusTooManyRequests {
		wait := retryAfter(err)
		if wait == 0 {
			wait = 60
		}
		w.Header().Set("Retry-After", strconv.Itoa(wait))
	}
	u.render(w, r, p.Status, "error", p.Heading, p)
}
