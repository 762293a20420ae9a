package agentcard

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every rejection Parse returns is an *InvalidError, which
// matches ErrInvalidCard and, more precisely, one of ErrNotJSON or
// ErrNotACard when that is the reason (the crawler records these as the
// error classes `not_json`, `not_a_card` and `invalid_card` of docs/security.md "Network policy").
var (
	ErrInvalidCard = errors.New("invalid agent card")
	ErrNotJSON     = errors.New("not a JSON document")
	ErrNotACard    = errors.New("not an agent card")
)

// InvalidError is a rejected document. Problems holds every finding, errors
// and the warnings gathered before the rejection, each with its pointer.
type InvalidError struct {
	// Reason is ErrNotJSON, ErrNotACard or ErrInvalidCard.
	Reason   error
	Problems []Problem
}

func (e *InvalidError) Error() string {
	first := ""
	n := 0
	for _, p := range e.Problems {
		if p.Severity != SeverityError {
			continue
		}
		if n == 0 {
			first = p.Message
			if p.Pointer != "" && !strings.Contains(first, p.Pointer) {
				first = p.Pointer + ": " + first
			}
		}
		n++
	}
	if n > 1 {
		return fmt.Sprintf("%v: %s (and %d more errors)", e.Reason, first, n-1)
	}
	return fmt.Sprintf("%v: %s", e.Reason, first)
}

// Is reports whether target is ErrInvalidCard or the precise reason.
func (e *InvalidError) Is(target error) bool {
	return target == ErrInvalidCard || target == e.Reason
}

// Problem codes. They are stable: the API, the UI and scripts match on them.
const (
	// Errors from the strict JSON parse (docs/threats.md C.28, C.29, C.31, E.55).
	CodeInvalidJSON         = "invalid-json"
	CodeEmptyDocument       = "empty-document"
	CodeByteOrderMark       = "byte-order-mark"
	CodeTrailingData        = "trailing-data"
	CodeDuplicateKey        = "duplicate-key"
	CodeInvalidUTF8         = "invalid-utf8"
	CodeLoneSurrogate       = "lone-surrogate"
	CodeTooDeep             = "too-deep"
	CodeTooLarge            = "too-large"
	CodeNumberOutOfRange    = "number-out-of-range"
	CodeNotAnObject         = "not-an-object"
	CodeNotACard            = "not-a-card"
	CodeNoName              = "no-name"          // error: a card without a name is not an agent card
	CodeNoEndpoint          = "no-endpoint"      // error: nor is one without any A2A endpoint
	CodeCaseVariantKey      = "case-variant-key" // C.30
	CodeDuplicateField      = "duplicate-field"  // camelCase and snake_case spelling of one field
	CodeWrongType           = "wrong-type"       // docs/api.md "Card parsing"
	CodeTooManyProblems     = "too-many-problems"
	CodeNullValue           = "null-value" // warning: null read as absent
	CodeMissingRequired     = "missing-required"
	CodeEmptyRequired       = "empty-required"
	CodeInvalidURL          = "invalid-url"
	CodeRelativeURL         = "relative-url"
	CodeSchemeRelativeURL   = "scheme-relative-url"
	CodeInsecureURL         = "insecure-url"
	CodeDangerousURL        = "dangerous-url-scheme" // C.34
	CodeUnsupportedURL      = "unsupported-url-scheme"
	CodeURLUserinfo         = "url-userinfo"
	CodeURLControlChars     = "url-control-characters"
	CodeOffHostInterface    = "off-host-interface" // C.35
	CodeInternalAddress     = "internal-address"   // C.35
	CodeBidiControl         = "bidi-control"       // C.36
	CodeZeroWidth           = "zero-width-character"
	CodeControlCharacter    = "control-character"
	CodeMixedScript         = "mixed-script"
	CodeTooLong             = "too-long" // C.33
	CodeTooMany             = "too-many" // C.33
	CodeDuplicateSkillID    = "duplicate-skill-id"
	CodeInvalidVersion      = "invalid-protocol-version"
	CodeUnknownScheme       = "unknown-security-scheme-type"
	CodeUndefinedScheme     = "undefined-security-scheme"
	CodeAmbiguousScheme     = "ambiguous-security-scheme"
	CodeProviderNameAlias   = "provider-name-alias"
	CodeLegacyAuth          = "legacy-authentication"
	CodeNoncanonicalBinding = "noncanonical-binding" // jsonrpc, json-rpc, HTTP_JSON… read as JSONRPC, HTTP+JSON
	CodePlaceholderURL      = "placeholder-url"      // https://<HOST>/…, {host}, ${VAR}
	CodeInvalidPort         = "invalid-port"         // not 1–65535
)
