package verifier

import "errors"

// Key set errors. A signature whose only trusted key set fails with one of
// these gets the status `error` (docs/verification.md): the set may be fixed later.
var (
	ErrKeySetTooLarge     = errors.New("verifier: key set is larger than 64 KiB")
	ErrKeySetTooManyKeys  = errors.New("verifier: key set has more than 100 keys")
	ErrKeySetMalformed    = errors.New("verifier: key set is not a JWKS")
	ErrKeySetPrivate      = errors.New("verifier: key set contains private key material")
	ErrKeySetSymmetric    = errors.New("verifier: key set contains a symmetric key")
	ErrKeySetDuplicateKid = errors.New("verifier: key set has a duplicate kid")
	ErrKeySetFetch        = errors.New("verifier: key set fetch failed")
	ErrKeySetBudget       = errors.New("verifier: too many key set URLs for one card")
)

// Signing errors.
var (
	ErrUnsupportedKey = errors.New("verifier: unsupported signing key")
	ErrAlgKeyMismatch = errors.New("verifier: algorithm does not fit the key")
	ErrUnsupportedAlg = errors.New("verifier: algorithm is not allowed")
	ErrBadSignatures  = errors.New("verifier: card member signatures is not an array")
)
