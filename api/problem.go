package api

import (
	"fmt"

	"github.com/cardexhq/cardex/problems"
	"github.com/cardexhq/cardex/registry"
)

// problemType is one entry of the problem catalogue: the slugs of
// docs/api.md, plus method-not-allowed, unavailable (docs/threats.md F.63,
// F.66) and internal-error. The explanation is served at /problems/{slug}.
// The status of each type is the problems package's (the one table of
// statuses, shared with the web UI).
type problemType struct {
	title   string
	explain string
}

var problemTypes = map[string]problemType{
	"invalid-json": {"Invalid JSON",
		"The request body is not exactly one well-formed JSON value in UTF-8: a syntax error, invalid UTF-8, a lone surrogate, a duplicate key, nesting deeper than 32 levels, or data after the value."},
	"unknown-field": {"Unknown field",
		"The request body has a member the operation does not define. Names are matched exactly, including case; see /api/v1/openapi.yaml."},
	"unsupported-media-type": {"Unsupported media type",
		"Request bodies must be sent as Content-Type: application/json (optionally with charset=utf-8)."},
	"body-too-large": {"Request body too large",
		"Request bodies are limited to 64 KiB."},
	"validation-failed": {"Validation failed",
		"One or more fields or query parameters are invalid. The errors member lists each one with a JSON pointer (for a query parameter, / and its name), a code and a message."},
	"invalid-url": {"Invalid card URL",
		"The card URL cannot be registered: it must be an absolute https URL (or a bare host) without userinfo or fragment, on port 443 unless the server allows otherwise."},
	"reserved-address": {"Reserved address",
		"The card URL names an IP address in a reserved range (loopback, private, link-local, multicast and the other IANA special-purpose ranges), which this server does not fetch from."},
	"duplicate-agent": {"Agent already registered",
		"The card URL is already registered. The agentId member names the existing agent; read it at /api/v1/agents/{agentId}."},
	"agent-removed": {"Agent removed",
		"The card URL belongs to an agent an administrator removed. It cannot be submitted again until an administrator restores it."},
	"version-conflict": {"Card changed, review again",
		"The version named in versionSeq is not the agent's current version (or nothing has been fetched yet). currentVersionSeq names the version to review."},
	"invalid-transition": {"Invalid transition",
		"The action does not apply to the agent's current status. Approve applies to pending (and flagged approved) agents, reject to pending, suspend to approved, restore to suspended, rejected or removed agents."},
	"unauthorized": {"Unauthorized",
		"The credentials are not valid. Send a valid token as Authorization: Bearer <token>; tokens in the URL are refused."},
	"forbidden": {"Forbidden",
		"The caller's role or token scope does not allow this operation on this agent."},
	"not-found": {"Not found",
		"There is no such resource, or the caller may not know of it."},
	"method-not-allowed": {"Method not allowed",
		"The resource exists but does not support this method; the Allow header lists the methods it does support."},
	"rate-limited": {"Too many requests",
		"This client (or the registrable domain it submits) has sent too many requests. Wait the number of seconds in Retry-After. A token has a budget of its own; only admin tokens are not rate-limited."},
	"unavailable": {"Service unavailable",
		"The database is busy or cannot be written right now, the search index is being built, or a search ran too long. Nothing was changed; retry after the number of seconds in Retry-After. Without Retry-After, the feature (search, reindex) is not configured on this server."},
	"claim-failed": {"Claim failed",
		"The host claim did not verify. The reason member says why: expired (ask for a new claim), already-verified (a claim issues one publisher token), wrong-content (the claim URL must answer the token alone, as text) or fetch-failed, with errorClass naming the crawler's error class (dns, blocked_address, connect, tls, timeout, too_large, cross_origin_redirect, redirect_loop, too_many_redirects, http_status). See docs/claims.md."},
	"catalog-failed": {"Catalog failed",
		"The submitted catalog URL was fetched but is not an AI Catalog (reason not-a-catalog: errorClass not_a_catalog, or too_large for a document over the entry limit; an agent card is submitted as cardUrl instead), or it could not be fetched (reason fetch-failed, with errorClass naming the crawler's error class: dns, connect, tls, timeout, too_large, cross_origin_redirect, redirect_loop, too_many_redirects, http_status). Nothing was registered. See docs/discovery.md."},
	"token-malformed": {"Bearer token malformed",
		"The bearer credential has two dots, so it was read as a JWT from the identity provider, but it is not a well-formed JWS compact token. See docs/identity.md."},
	"token-wrong-issuer": {"Bearer token from another issuer",
		"The JWT's iss is not the identity provider this server is configured with."},
	"token-alg-not-allowed": {"Bearer token algorithm not allowed",
		"The JWT is unsigned (alg none) or signed with an HMAC or other algorithm this server does not accept; only the provider's asymmetric signatures (RS, PS, ES, EdDSA) are."},
	"token-bad-signature": {"Bearer token signature not valid",
		"The JWT's signature does not verify with any of the identity provider's published keys."},
	"token-expired": {"Bearer token expired",
		"The JWT's exp has passed, or its nbf or iat lies in the future, beyond the allowed clock skew of one minute. Get a new access token from the identity provider."},
	"token-wrong-audience": {"Bearer token for another audience",
		"The JWT's aud does not name this server's configured audience (--oidc-audience). Without an audience configured, bearer JWTs are not accepted at all and answer unauthorized."},
	"token-not-access-token": {"Not an access token",
		"The JWT is an ID token (its aud names the web UI's client id, or it carries a nonce). ID tokens are never bearer credentials; send an access token issued for this server's audience."},
	"token-no-subject": {"Bearer token without subject",
		"The JWT lacks the subject claim this server is configured to read (--oidc-subject-claim)."},
	"identity-provider-unavailable": {"Identity provider unavailable",
		"The identity provider's discovery document or keys could not be read, so the bearer JWT could not be checked. Retry later, or use a Cardex token."},
	"internal-error": {"Internal error",
		"The server failed unexpectedly. The detail names the request id to quote to the operator."},
}

// problem is an API error on its way to the client. Handlers return it (or
// a registry error, which handleError classifies with problems.Of).
type problem struct {
	Type              string                `json:"type"`
	Title             string                `json:"title"`
	Status            int                   `json:"status"`
	Detail            string                `json:"detail,omitempty"`
	Errors            []registry.FieldError `json:"errors,omitempty"`
	AgentID           string                `json:"agentId,omitempty"`
	CurrentVersionSeq *int64                `json:"currentVersionSeq,omitempty"`
	Reason            string                `json:"reason,omitempty"`     // claim-failed, catalog-failed
	ErrorClass        string                `json:"errorClass,omitempty"` // claim-failed after a fetch error, catalog-failed

	retryAfter int    // seconds; sets Retry-After when > 0
	authError  string // RFC 6750 error code for WWW-Authenticate
}

func (p *problem) Error() string { return p.Type + ": " + p.Detail }

// newProblem makes the problem of a catalogue slug.
func newProblem(slug, detail string) *problem {
	t, ok := problemTypes[slug]
	if !ok {
		panic(fmt.Sprintf("api: unknown problem slug %q", slug))
	}
	return &problem{Type: "/problems/" + slug, Title: t.title, Status: problems.Status(slug), Detail: detail}
}

// fieldProblem is validation-failed for one field or query parameter.
func fieldProblem(pointer, code, message string) *problem {
	p := newProblem("validation-failed", message)
	p.Errors = []registry.FieldError{{Pointer: pointer, Code: code, Message: message}}
	return p
}
