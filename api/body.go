package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/strictjson"
)

// Request body limits (docs/threats.md A.7). Every body the API takes is a
// small object; a JWK Set is capped at 64 KiB by docs/security.md "Network policy" as well.
const (
	maxBodyBytes = 64 << 10
	maxBodyDepth = 32
)

const mediaJSON = "application/json"

// readBody reads and strictly parses a JSON request body: JSON media type
// (else 415), at most maxBodyBytes (else 413), exactly one JSON value in
// valid UTF-8 with no duplicate keys and bounded depth (else 400
// invalid-json). It parses with strictjson rather than encoding/json, which
// ignores trailing data, keeps the last duplicate key and repairs invalid
// UTF-8 (docs/threats.md A.7, C.29–C.31). A missing body returns (nil, nil,
// nil) unless required.
func readBody(c echo.Context, required bool, media ...string) (*strictjson.Value, []byte, error) {
	r := c.Request()
	if len(media) == 0 {
		media = []string{mediaJSON}
	}
	ct := r.Header.Get(echo.HeaderContentType)
	if r.ContentLength == 0 && ct == "" {
		if required {
			return nil, nil, newProblem("invalid-json", "the request body is empty")
		}
		return nil, nil, nil
	}
	if err := checkMediaType(ct, media); err != nil {
		return nil, nil, err
	}
	// MaxBytesReader stops at the limit whatever Content-Length claims, and
	// makes the server close the connection instead of draining the rest of
	// a huge body.
	data, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			return nil, nil, newProblem("invalid-json", "the request body could not be read")
		}
		// A document nested past the depth limit within its first 64 KiB
		// is invalid whatever its length: say so rather than "too large".
		if nestsDeeperThan(data, maxBodyDepth) {
			return nil, nil, newProblem("invalid-json", "the request body nests deeper than 32 levels")
		}
		return nil, nil, newProblem("body-too-large", "the request body is larger than 64 KiB")
	}
	if len(data) == 0 {
		if required {
			return nil, nil, newProblem("invalid-json", "the request body is empty")
		}
		return nil, nil, nil
	}
	v, err := strictjson.ParseWithLimits(data, strictjson.Limits{MaxBytes: maxBodyBytes, MaxDepth: maxBodyDepth})
	if err != nil {
		detail := "the request body is not valid JSON"
		if se, ok := strictjson.AsError(err); ok {
			detail = se.Error()
		}
		return nil, nil, newProblem("invalid-json", detail)
	}
	return v, data, nil
}

// checkMediaType accepts one of media, with no parameter but an optional
// charset=utf-8 (JSON is UTF-8, RFC 8259 §8.1).
func checkMediaType(ct string, media []string) error {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !slices.Contains(media, mt) {
		return newProblem("unsupported-media-type", "request bodies must be "+strings.Join(media, " or "))
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return newProblem("unsupported-media-type", "the only media type parameter accepted is charset=utf-8")
		}
	}
	return nil
}

// decodeObject checks that body is an object whose member names are all in
// known (exactly, case included: encoding/json would match "CARDURL" to
// cardUrl) and decodes it into dst. A wrong JSON type is validation-failed
// with the member's pointer.
func decodeObject(body *strictjson.Value, raw []byte, dst any, known ...string) error {
	if body == nil {
		return nil
	}
	if body.Kind != strictjson.Object {
		return fieldProblem("", "type", "the request body must be a JSON object")
	}
	for _, m := range body.Object {
		if !slices.Contains(known, m.Key) {
			ptr := strictjson.Pointer(clip(m.Key, 64))
			p := newProblem("unknown-field", "unknown field "+ptr)
			p.Errors = fieldProblem(ptr, "unknown-field", "this operation has no field "+ptr).Errors
			return p
		}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			ptr := "/" + strings.ReplaceAll(te.Field, ".", "/")
			return fieldProblem(ptr, "type", ptr+" must be a JSON "+jsonTypeName(te.Type.Kind().String()))
		}
		return newProblem("invalid-json", "the request body does not match the operation's schema")
	}
	return nil
}

func jsonTypeName(goKind string) string {
	switch {
	case goKind == "string":
		return "string"
	case goKind == "bool":
		return "boolean"
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "integer"
	}
	return "value of the documented type"
}

// clip shortens client-supplied text echoed in a problem.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// nestsDeeperThan scans a JSON prefix (strings and escapes skipped) for
// array or object nesting deeper than max.
func nestsDeeperThan(data []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch b {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			depth++
			if depth > max {
				return true
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return false
}

// emptyBody checks the body of an operation that takes none: absent, or an
// empty JSON object; any member is unknown-field, anything else as
// readBody and decodeObject answer.
func emptyBody(c echo.Context) error {
	body, raw, err := readBody(c, false)
	if err != nil {
		return err
	}
	var req struct{}
	return decodeObject(body, raw, &req)
}
