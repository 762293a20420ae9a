// Package problems is the one table that says what an error means to a
// client: its problem type (a slug, served at /problems/{slug}) and its
// HTTP status (docs/errors.md). The API words a class as RFC 9457
// problem+json, the web UI as an error page; neither keeps its own
// error-to-status table.
package problems

import (
	"errors"
	"net/http"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Problem type slugs.
const (
	InvalidJSON          = "invalid-json"
	UnknownField         = "unknown-field"
	UnsupportedMediaType = "unsupported-media-type"
	BodyTooLarge         = "body-too-large"
	ValidationFailed     = "validation-failed"
	InvalidURL           = "invalid-url"
	ReservedAddress      = "reserved-address"
	DuplicateAgent       = "duplicate-agent"
	AgentRemoved         = "agent-removed"
	VersionConflict      = "version-conflict"
	InvalidTransition    = "invalid-transition"
	Unauthorized         = "unauthorized"
	Forbidden            = "forbidden"
	NotFound             = "not-found"
	MethodNotAllowed     = "method-not-allowed"
	RateLimited          = "rate-limited"
	Unavailable          = "unavailable"
	ClaimFailed          = "claim-failed"
	CatalogFailed        = "catalog-failed"
	InternalError        = "internal-error"
	// A bearer JWT refused, by reason class (docs/errors.md "Bearer
	// JWTs"): TokenPrefix + identity.Reason*.
	TokenMalformed      = "token-malformed"
	TokenWrongIssuer    = "token-wrong-issuer"
	TokenAlgNotAllowed  = "token-alg-not-allowed"
	TokenBadSignature   = "token-bad-signature"
	TokenExpired        = "token-expired"
	TokenWrongAudience  = "token-wrong-audience"
	TokenNotAccessToken = "token-not-access-token"
	TokenNoSubject      = "token-no-subject"
	// IdentityUnavailable is the identity provider not answering while a
	// bearer JWT is checked.
	IdentityUnavailable = "identity-provider-unavailable"
)

// TokenPrefix starts the slug of a refused bearer JWT.
const TokenPrefix = "token-"

// statuses is the HTTP status of every problem type.
var statuses = map[string]int{
	InvalidJSON:          http.StatusBadRequest,
	UnknownField:         http.StatusBadRequest,
	UnsupportedMediaType: http.StatusUnsupportedMediaType,
	BodyTooLarge:         http.StatusRequestEntityTooLarge,
	ValidationFailed:     http.StatusBadRequest,
	InvalidURL:           http.StatusBadRequest,
	ReservedAddress:      http.StatusBadRequest,
	DuplicateAgent:       http.StatusConflict,
	AgentRemoved:         http.StatusConflict,
	VersionConflict:      http.StatusConflict,
	InvalidTransition:    http.StatusConflict,
	Unauthorized:         http.StatusUnauthorized,
	Forbidden:            http.StatusForbidden,
	NotFound:             http.StatusNotFound,
	MethodNotAllowed:     http.StatusMethodNotAllowed,
	RateLimited:          http.StatusTooManyRequests,
	Unavailable:          http.StatusServiceUnavailable,
	ClaimFailed:          http.StatusConflict,
	CatalogFailed:        http.StatusUnprocessableEntity,
	InternalError:        http.StatusInternalServerError,
	TokenMalformed:       http.StatusUnauthorized,
	TokenWrongIssuer:     http.StatusUnauthorized,
	TokenAlgNotAllowed:   http.StatusUnauthorized,
	TokenBadSignature:    http.StatusUnauthorized,
	TokenExpired:         http.StatusUnauthorized,
	TokenWrongAudience:   http.StatusUnauthorized,
	TokenNotAccessToken:  http.StatusUnauthorized,
	TokenNoSubject:       http.StatusUnauthorized,
	IdentityUnavailable:  http.StatusServiceUnavailable,
}

// Slugs lists every problem type.
func Slugs() []string {
	out := make([]string, 0, len(statuses))
	for s := range statuses {
		out = append(out, s)
	}
	return out
}

// Status is the HTTP status of a problem type; 500 for a slug that is not
// one.
func Status(slug string) int {
	if s, ok := statuses[slug]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// table classifies the sentinel errors of the registry and the search
// index. The first match wins.
var table = []struct {
	err  error
	slug string
}{
	{registry.ErrNotFound, NotFound},
	{registry.ErrForbidden, Forbidden},
	{registry.ErrUnauthorized, Unauthorized},
	{registry.ErrInvalidTransition, InvalidTransition},
	{registry.ErrAgentRemoved, AgentRemoved},
	{registry.ErrDuplicate, DuplicateAgent},
	{registry.ErrVersionConflict, VersionConflict},
	{registry.ErrInvalidURL, InvalidURL},
	{registry.ErrValidation, ValidationFailed},
	{registry.ErrInvalidPageToken, ValidationFailed},
	{registry.ErrUnavailable, Unavailable},
	{registry.ErrClaimFailed, ClaimFailed},
	{registry.ErrRateLimited, RateLimited},
	{registry.ErrClaimsUnavailable, Unavailable},
	{registry.ErrCatalogFailed, CatalogFailed},
	{registry.ErrCatalogsUnavailable, Unavailable},
	{search.ErrInvalidQuery, ValidationFailed},
	{search.ErrInvalidPageToken, ValidationFailed},
	{search.ErrNotReady, Unavailable},
	{search.ErrTimeout, Unavailable},
	{search.ErrClosed, Unavailable},
}

// Of classifies err: its problem type, or ok false for an error the table
// does not know (an internal error: log it, show nothing of it). A card URL
// refused for naming a reserved address is ReservedAddress, not InvalidURL.
func Of(err error) (slug string, ok bool) {
	var ue *registry.URLError
	if errors.As(err, &ue) && ue.Code == registry.URLCodeReserved {
		return ReservedAddress, true
	}
	var te *identity.TokenError
	if errors.As(err, &te) {
		return TokenPrefix + te.Reason, true
	}
	if errors.Is(err, identity.ErrProvider) {
		return IdentityUnavailable, true
	}
	for _, row := range table {
		if errors.Is(err, row.err) {
			return row.slug, true
		}
	}
	return InternalError, false
}
