package verifier

import (
	"crypto"
	"fmt"

	"github.com/cardexhq/cardex/strictjson"
	"github.com/go-jose/go-jose/v4"
)

// Key set limits (docs/security.md "Network policy", docs/threats.md D.44).
const (
	MaxKeySetBytes = 64 << 10
	MaxKeySetKeys  = 100
)

// privateMembers are JWK members that only private or symmetric keys carry
// (RFC 7518 §6.2.2, §6.3.2, §6.4.1). A published set that holds any of them
// is a leak or a trap, so the whole set is refused.
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// keySet is a filtered JWKS: public signature keys by kid.
type keySet struct {
	keys map[string]*setKey
}

type setKey struct {
	kid string
	alg string // the key's declared alg, "" when absent
	pub crypto.PublicKey
	jwk jose.JSONWebKey
	err error // the key could not be used (unsupported kty, bad parameters)
}

// parseKeySet parses and filters a JWKS (RFC 7517 §5). go-jose would take the
// first key with a matching kid and ignore `use` and `alg` (docs/design.md "Dependencies"),
// so the filtering happens here: size and count caps, no private or
// symmetric material, no duplicate kid, `use` empty or "sig", `key_ops`
// absent or containing "verify".
func parseKeySet(raw []byte) (*keySet, error) {
	if len(raw) > MaxKeySetBytes {
		return nil, ErrKeySetTooLarge
	}
	root, err := strictjson.ParseWithLimits(raw, strictjson.Limits{MaxBytes: MaxKeySetBytes, MaxDepth: 16})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySetMalformed, err)
	}
	keys := root.Get("keys")
	if keys == nil || keys.Kind != strictjson.Array {
		// Catches the {kid: PEM} maps of the a2a-samples Go sample.
		return nil, fmt.Errorf("%w: no \"keys\" array", ErrKeySetMalformed)
	}
	if len(keys.Array) > MaxKeySetKeys {
		return nil, fmt.Errorf("%w (%d)", ErrKeySetTooManyKeys, len(keys.Array))
	}
	set := &keySet{keys: make(map[string]*setKey, len(keys.Array))}
	seen := make(map[string]bool, len(keys.Array))
	for i, k := range keys.Array {
		if k.Kind != strictjson.Object {
			return nil, fmt.Errorf("%w: keys[%d] is not an object", ErrKeySetMalformed, i)
		}
		for _, m := range privateMembers {
			if k.Get(m) != nil {
				return nil, fmt.Errorf("%w: keys[%d] has %q", ErrKeySetPrivate, i, m)
			}
		}
		if kty := k.Get("kty"); kty != nil && kty.Kind == strictjson.String && kty.String == "oct" {
			return nil, fmt.Errorf("%w: keys[%d]", ErrKeySetSymmetric, i)
		}
		kid := ""
		if v := k.Get("kid"); v != nil {
			if v.Kind != strictjson.String {
				return nil, fmt.Errorf("%w: keys[%d].kid is not a string", ErrKeySetMalformed, i)
			}
			kid = v.String
			if seen[kid] {
				return nil, fmt.Errorf("%w %q", ErrKeySetDuplicateKid, kid)
			}
			seen[kid] = true
		}
		if kid == "" || !forSigning(k) {
			continue // cannot be selected by a signature's kid, or not for signatures
		}
		sk := &setKey{kid: kid}
		if a := k.Get("alg"); a != nil && a.Kind == strictjson.String {
			sk.alg = a.String
		}
		if err := sk.jwk.UnmarshalJSON(strictjson.Marshal(k)); err != nil {
			sk.err = err
		} else if !sk.jwk.IsPublic() || !sk.jwk.Valid() {
			sk.err = fmt.Errorf("not a valid public key")
		} else {
			sk.pub = sk.jwk.Key
		}
		set.keys[kid] = sk
	}
	return set, nil
}

func forSigning(k *strictjson.Value) bool {
	if u := k.Get("use"); u != nil && (u.Kind != strictjson.String || u.String != "sig") {
		return false
	}
	if ops := k.Get("key_ops"); ops != nil {
		if ops.Kind != strictjson.Array {
			return false
		}
		for _, op := range ops.Array {
			if op.Kind == strictjson.String && op.String == "verify" {
				return true
			}
		}
		return false
	}
	return true
}

func (s *keySet) lookup(kid string) (*setKey, bool) {
	k, ok := s.keys[kid]
	return k, ok
}

// CheckKeySet reports whether raw is a JWKS Cardex accepts as a trust root
// (the checks of parseKeySet). Use it before pinning keys for an agent or
// accepting `--jwks`.
func CheckKeySet(raw []byte) error {
	_, err := parseKeySet(raw)
	return err
}
