package verifier

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/cardexhq/cardex/strictjson"
)

// maxKidBytes caps the key id (docs/threats.md D.45): it is an opaque string
// used only for exact lookups.
const maxKidBytes = 256

// headerLimits bound the protected header's JSON.
var headerLimits = strictjson.Limits{MaxBytes: 16 << 10, MaxDepth: 8}

// protectedHeader is what Cardex reads from a signature's protected header.
type protectedHeader struct {
	alg, kid, jku string
	hasJKU        bool
	embedded      []string // jwk, x5c, x5u: never trust roots (D.42)
}

var errMalformed = errors.New("malformed signature")

// decodeB64URL decodes canonical unpadded base64url. Padding, '+', '/',
// whitespace and non-zero trailing bits are rejected (docs/api.md "Card parsing", D.48):
// a signature has exactly one spelling.
func decodeB64URL(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, fmt.Errorf("%w: character %q at %d is not base64url without padding", errMalformed, c, i)
		}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: not canonical base64url: %v", errMalformed, err)
	}
	return b, nil
}

// parseProtected decodes and checks a protected header. On error the header
// fields read so far are still returned for the verdict.
func parseProtected(b64 string) (*protectedHeader, error) {
	h := &protectedHeader{}
	if b64 == "" {
		return h, fmt.Errorf("%w: protected header is empty", errMalformed)
	}
	raw, err := decodeB64URL(b64)
	if err != nil {
		return h, fmt.Errorf("protected header: %w", err)
	}
	// Strict parse: a duplicate "alg" or "kid" could make go-jose and this
	// check read different values (docs/threats.md C.29).
	v, err := strictjson.ParseWithLimits(raw, headerLimits)
	if err != nil {
		return h, fmt.Errorf("%w: protected header is not valid JSON: %v", errMalformed, err)
	}
	if v.Kind != strictjson.Object {
		return h, fmt.Errorf("%w: protected header is a JSON %s, not an object", errMalformed, v.Kind)
	}
	if a := v.Get("alg"); a != nil && a.Kind == strictjson.String {
		h.alg = a.String
	}
	if k := v.Get("kid"); k != nil && k.Kind == strictjson.String {
		h.kid = k.String
	}
	for _, name := range []string{"jwk", "x5c", "x5u"} {
		if v.Get(name) != nil {
			h.embedded = append(h.embedded, name)
		}
	}
	switch a := v.Get("alg"); {
	case a == nil || a.Kind != strictjson.String || a.String == "":
		return h, fmt.Errorf("%w: protected header has no alg", errMalformed)
	case !isAllowedAlg(a.String):
		return h, fmt.Errorf("algorithm %q is not allowed (docs/threats.md D.39, D.40)", a.String)
	}
	switch k := v.Get("kid"); {
	case k == nil || k.Kind != strictjson.String || k.String == "":
		return h, fmt.Errorf("%w: protected header has no kid", errMalformed)
	case len(k.String) > maxKidBytes:
		h.kid = strings.ToValidUTF8(k.String[:maxKidBytes], "") // shown truncated, never cut mid-character
		return h, fmt.Errorf("%w: kid is longer than %d bytes (docs/threats.md D.45)", errMalformed, maxKidBytes)
	}
	if v.Get("crit") != nil {
		// Cardex understands no extension header (RFC 7515 §4.1.11, D.47).
		return h, fmt.Errorf("%w: protected header has crit", errMalformed)
	}
	if b := v.Get("b64"); b != nil && (b.Kind != strictjson.Bool || !b.Bool) {
		// A2A signs the base64url payload; RFC 7797 unencoded payloads are not
		// part of the protocol (D.47).
		return h, fmt.Errorf("%w: protected header has b64 other than true", errMalformed)
	}
	if j := v.Get("jku"); j != nil {
		if j.Kind != strictjson.String || j.String == "" {
			return h, fmt.Errorf("%w: jku is not a URL string", errMalformed)
		}
		h.jku, h.hasJKU = j.String, true
	}
	return h, nil
}

func isAllowedAlg(alg string) bool {
	_, ok := allowedAlgs[alg]
	return ok
}

// steeringMembers are unprotected header members that would change which key
// or algorithm is used if a JOSE library merged them in (docs/threats.md D.46).
var steeringMembers = []string{"alg", "kid", "jku", "jwk", "x5u", "x5c", "crit"}

// unprotectedNote describes what the unprotected header tried to steer, or
// returns "". crit there makes the signature invalid (RFC 7515 §4.1.11: crit
// must be integrity protected; D.47).
func unprotectedNote(h *strictjson.Value) (note string, invalid bool) {
	if h == nil {
		return "", false
	}
	if h.Kind != strictjson.Object {
		return "unprotected header is not an object (ignored)", false
	}
	var found []string
	for _, name := range steeringMembers {
		if h.Get(name) != nil {
			found = append(found, name)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return "unprotected header members ignored: " + strings.Join(found, ", "), h.Get("crit") != nil
}
