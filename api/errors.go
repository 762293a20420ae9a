package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/problems"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// echoStatusSlugs maps the statuses echo itself produces (router misses).
var echoStatusSlugs = map[int]string{
	http.StatusNotFound:              "not-found",
	http.StatusMethodNotAllowed:      "method-not-allowed",
	http.StatusRequestEntityTooLarge: "body-too-large",
	http.StatusUnsupportedMediaType:  "unsupported-media-type",
}

// unavailableRetry is the Retry-After of a 503: the store's busy wait is a
// few seconds, so a client retrying after that usually gets through.
const unavailableRetry = 5

// toProblem translates any error a handler returns into the problem sent.
func toProblem(err error, requestID string) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if slug, ok := echoStatusSlugs[he.Code]; ok {
			return newProblem(slug, problemTypes[slug].title)
		}
	}
	if slug, ok := problems.Of(err); ok {
		return decorate(newProblem(slug, ""), err)
	}
	return newProblem("internal-error", "internal error; request id "+requestID)
}

// decorate copies what the registry's typed errors carry into the problem.
// Details come from the registry's own messages, never from a wrapped
// driver error (those stay in the log).
func decorate(p *problem, err error) *problem {
	var dup *registry.DuplicateError
	var vc *registry.VersionConflictError
	var ue *registry.URLError
	var ve *registry.ValidationError
	var ce *registry.ClaimError
	var cate *registry.CatalogError
	var re *registry.RetryError
	var te *identity.TokenError
	if sp, ok := decorateSearch(p, err); ok {
		return sp
	}
	switch {
	case errors.As(err, &dup):
		p.AgentID = dup.AgentID
		p.Detail = "the card URL is already registered as agent " + dup.AgentID
	case errors.As(err, &vc):
		seq := vc.CurrentVersionSeq
		p.CurrentVersionSeq = &seq
		p.Detail = "the card changed: the current version is " + strconv.FormatInt(seq, 10)
	case errors.As(err, &ue):
		p.Detail = ue.Reason
	case errors.As(err, &ce):
		p.Reason, p.ErrorClass, p.Detail = ce.Reason, ce.ErrorClass, ce.Detail
	case errors.As(err, &re):
		p.retryAfter = ratelimit.RetryAfter(re.Wait)
		p.Detail = re.Detail
	case errors.As(err, &cate):
		p.Reason, p.ErrorClass, p.Detail = cate.Reason, cate.ErrorClass, cate.Detail
	case errors.Is(err, registry.ErrCatalogsUnavailable):
		p.Detail = "catalog submissions are not configured on this server"
	case errors.Is(err, registry.ErrClaimsUnavailable):
		p.Detail = "host claims are not configured on this server"
	case errors.As(err, &ve) && len(ve.Errors) > 0:
		p.Errors = ve.Errors
		p.Detail = ve.Errors[0].Message
	case errors.Is(err, registry.ErrInvalidPageToken):
		p.Errors = []registry.FieldError{{Pointer: "/pageToken", Code: "invalid", Message: "the page token was not issued by this server or has expired"}}
		p.Detail = p.Errors[0].Message
	case errors.Is(err, registry.ErrUnavailable):
		p.retryAfter = unavailableRetry
		p.Detail = "the database is busy or unavailable; nothing was changed"
	case errors.As(err, &te):
		// The reason class and nothing more (docs/errors.md "Bearer JWTs").
		p.Detail = "the bearer JWT was refused: " + te.Reason
		p.authError = "invalid_token"
	case errors.Is(err, identity.ErrProvider):
		p.retryAfter = unavailableRetry
		p.Detail = "the identity provider cannot be reached to check the bearer JWT"
	case errors.Is(err, registry.ErrUnauthorized):
		p.Detail = genericUnauthorized
		p.authError = "invalid_token"
	default:
		p.Detail = problemTypes[slugOf(p)].title
	}
	return p
}

func slugOf(p *problem) string { return p.Type[len("/problems/"):] }

// handleError is echo's HTTPErrorHandler: every error becomes problem+json.
func (s *server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	rid := requestID(c)
	p := toProblem(err, rid)
	switch {
	case p.Status >= 500 && errors.Is(err, context.Canceled):
		// The client went away; there is nobody to answer and nothing wrong.
		s.log.Debug("request canceled", "request_id", rid, "route", c.Path())
	case p.Status == http.StatusInternalServerError:
		s.log.Error("internal error", "request_id", rid, "route", c.Path(), "err", err)
	case p.Status == http.StatusServiceUnavailable:
		s.log.Warn("unavailable", "request_id", rid, "route", c.Path(), "err", err)
	}
	if isARD(c) {
		writeARDError(c, p)
		return
	}
	writeProblem(c, p)
}

func writeProblem(c echo.Context, p *problem) {
	h := c.Response().Header()
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retryAfter))
	}
	if p.Status == http.StatusUnauthorized {
		v := `Bearer realm="cardex"`
		if p.authError != "" {
			v += `, error="` + p.authError + `"`
		}
		h.Set("WWW-Authenticate", v)
	}
	body, err := json.Marshal(p)
	if err != nil {
		body = []byte(`{"type":"/problems/internal-error","title":"Internal error","status":500}`)
		p.Status = http.StatusInternalServerError
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(p.Status)
		return
	}
	// A failed write means the client is gone; there is nobody to tell.
	_ = c.Blob(p.Status, "application/problem+json", body)
}
