package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/cardexhq/cardex/problems"
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
	errNoClaim     = errors.New("no such host claim")
)

// errorPage is what an error page says; Detail never carries internal
// error text (it could hold SQL or paths), only what the visitor can act on.
type errorPage struct {
	Status  int
	Heading string
	Detail  string
}

// ownErrors are the UI's own errors, classified like the registry's.
var ownErrors = []struct {
	err  error
	slug string
}{
	{errNotFound, problems.NotFound},
	{errMethod, problems.MethodNotAllowed},
	{errCrossOrigin, problems.Forbidden},
	{errRateLimited, problems.RateLimited},
	{errBadRequest, problems.ValidationFailed},
	{errNoClaim, problems.NotFound},
}

// wording is how the UI words each problem type; the status is the shared
// table's (package problems). specific words a few errors more precisely
// than their type.
var wording = map[string][2]string{
	problems.NotFound:          {"Not found", "There is no page at this address."},
	problems.MethodNotAllowed:  {"Method not allowed", "This address does not accept that kind of request."},
	problems.Forbidden:         {"Forbidden", "You may not do this."},
	problems.Unauthorized:      {"Sign in required", "Sign in on the admin page first."},
	problems.RateLimited:       {"Too many requests", "Please wait a minute and try again."},
	problems.ValidationFailed:  {"Bad request", "The request could not be understood."},
	problems.InvalidURL:        {"Not a card URL", "This is not a card URL Cardex can fetch."},
	problems.ReservedAddress:   {"Not a card URL", "This card URL names an address Cardex never fetches from."},
	problems.DuplicateAgent:    {"Already registered", "This card URL is already registered."},
	problems.AgentRemoved:      {"Agent removed", "This agent was removed from the catalogue by an admin."},
	problems.VersionConflict:   {"The card changed", "The card changed while you were reviewing it. Review it again."},
	problems.InvalidTransition: {"Not possible now", "This action does not apply to the agent in its current status."},
	problems.ClaimFailed:       {"Claim failed", "The host did not answer the claim token."},
	problems.Unavailable:       {"Temporarily unavailable", "The registry cannot answer right now. Try again in a minute."},
}

var specific = []struct {
	err             error
	heading, detail string
}{
	{registry.ErrNotFound, "Not found", "There is no agent with this id."},
	{errNoClaim, "Not found", "There is no host claim with this id. Ask for a new one on the publish page."},
	{registry.ErrClaimsUnavailable, "Host claims unavailable", "This server cannot verify host claims."},
	{errCrossOrigin, "Cross-origin request refused", "Forms on this site can only be sent from this site."},
	{search.ErrInvalidQuery, "Bad search", "The search is too long or not valid text."},
	{search.ErrInvalidPageToken, "Bad page link", "This page link belongs to another search. Start again from the first page."},
	{registry.ErrInvalidPageToken, "Bad page link", "This page link belongs to another list. Start again from the first page."},
	{search.ErrNotReady, "Search is being rebuilt", "The search index is being rebuilt. Try again in a minute."},
	{search.ErrTimeout, "Search took too long", "Try a narrower search."},
	{search.ErrClosed, "Shutting down", "The server is restarting. Try again in a minute."},
}

// pageFor classifies err with the shared table and words it; known is
// false for an internal error.
func pageFor(err error) (p errorPage, known bool) {
	slug, known := problems.Of(err)
	for _, o := range ownErrors {
		if errors.Is(err, o.err) {
			slug, known = o.slug, true
			break
		}
	}
	if !known {
		return errorPage{http.StatusInternalServerError, "Something went wrong", "The error has been logged. Try again later."}, false
	}
	w := wording[slug]
	p = errorPage{Status: problems.Status(slug), Heading: w[0], Detail: w[1]}
	for _, s := range specific {
		if errors.Is(err, s.err) {
			p.Heading, p.Detail = s.heading, s.detail
			break
		}
	}
	return p, true
}

// fail renders the error page for err, with the same security headers as
// every other page (docs/threats.md H.76). Unknown errors are logged and
// shown as a generic 500.
func (u *ui) fail(w http.ResponseWriter, r *http.Request, err error) {
	p, known := pageFor(err)
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
