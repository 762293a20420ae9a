package verifier

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	_ "crypto/sha256" // hash implementations for the allowed algorithms
	_ "crypto/sha512"
	"errors"
	"fmt"
	"math/big"

	"github.com/go-jose/go-jose/v4"
)

// algSpec is what an allowed JWS algorithm demands of its key and signature.
type algSpec struct {
	kty    string // "EC", "OKP", "RSA"
	curve  elliptic.Curve
	hash   crypto.Hash
	pss    bool
	sigLen int // exact raw signature length for EC and EdDSA
}

// allowedAlgs is the allow-list (docs/threats.md D.39–D.41): no none, no HS*.
var allowedAlgs = map[string]algSpec{
	"ES256": {kty: "EC", curve: elliptic.P256(), hash: crypto.SHA256, sigLen: 64},
	"ES384": {kty: "EC", curve: elliptic.P384(), hash: crypto.SHA384, sigLen: 96},
	"ES512": {kty: "EC", curve: elliptic.P521(), hash: crypto.SHA512, sigLen: 132},
	"EdDSA": {kty: "OKP", sigLen: ed25519.SignatureSize},
	"RS256": {kty: "RSA", hash: crypto.SHA256},
	"RS384": {kty: "RSA", hash: crypto.SHA384},
	"RS512": {kty: "RSA", hash: crypto.SHA512},
	"PS256": {kty: "RSA", hash: crypto.SHA256, pss: true},
	"PS384": {kty: "RSA", hash: crypto.SHA384, pss: true},
	"PS512": {kty: "RSA", hash: crypto.SHA512, pss: true},
}

// joseAlgs is the same list for go-jose's ParseDetached.
var joseAlgs = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
}

// RSA bounds: 2048 bits is the floor of RFC 7518 §3.3; the ceiling keeps one
// signature's verification cheap (docs/threats.md D.51).
const (
	minRSABits = 2048
	maxRSABits = 8192
)

var errKeyMismatch = errors.New("key does not fit the algorithm")

// checkKey reports whether pub is the kind of key alg needs: ES256 ⇔ P-256,
// ES384 ⇔ P-384, ES512 ⇔ P-521, EdDSA ⇔ Ed25519, RS*/PS* ⇔ RSA ≥ 2048 bits
// with an odd exponent ≥ 3 (docs/threats.md D.41; go-jose does not check the
// curve on verify, docs/design.md "Dependencies").
func checkKey(alg string, pub crypto.PublicKey) error {
	spec, ok := allowedAlgs[alg]
	if !ok {
		return fmt.Errorf("algorithm %q is not allowed", alg)
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if spec.kty != "EC" || k.Curve != spec.curve {
			return fmt.Errorf("%w: %s needs %s, key is EC %s", errKeyMismatch, alg, keyNeed(spec), k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
		if spec.kty != "OKP" || len(k) != ed25519.PublicKeySize {
			return fmt.Errorf("%w: %s needs %s, key is Ed25519", errKeyMismatch, alg, keyNeed(spec))
		}
	case *rsa.PublicKey:
		if spec.kty != "RSA" {
			return fmt.Errorf("%w: %s needs %s, key is RSA", errKeyMismatch, alg, keyNeed(spec))
		}
		if bits := k.N.BitLen(); bits < minRSABits || bits > maxRSABits {
			return fmt.Errorf("%w: RSA key has %d bits, need %d to %d", errKeyMismatch, bits, minRSABits, maxRSABits)
		}
		if k.E < 3 || k.E%2 == 0 {
			return fmt.Errorf("%w: RSA exponent %d is not an odd number ≥ 3", errKeyMismatch, k.E)
		}
		if rocaFingerprint(k.N) {
			return fmt.Errorf("%w: RSA modulus has the ROCA fingerprint (CVE-2017-15361)", errKeyMismatch)
		}
	default:
		return fmt.Errorf("%w: %s needs %s, key is %T", errKeyMismatch, alg, keyNeed(spec), pub)
	}
	return nil
}

func keyNeed(s algSpec) string {
	switch s.kty {
	case "EC":
		return "EC " + s.curve.Params().Name
	case "OKP":
		return "Ed25519"
	}
	return "RSA ≥ 2048 bits"
}

var errBadSignature = errors.New("signature does not verify")

// verifyPrimitive checks sig over msg with pub under alg. It is the one place
// signatures are checked; the Wycheproof sweep (D.53) runs against it.
// ECDSA signatures are raw r‖s of exactly twice the curve size (RFC 7518
// §3.4); a DER signature or a 65-byte ES256 signature fails (D.48). PSS uses
// a salt as long as the hash (RFC 7518 §3.5).
func verifyPrimitive(alg string, pub crypto.PublicKey, msg, sig []byte) error {
	if err := checkKey(alg, pub); err != nil {
		return err
	}
	spec := allowedAlgs[alg]
	if spec.sigLen != 0 && len(sig) != spec.sigLen {
		return fmt.Errorf("%w: %s signature must be %d bytes, got %d", errBadSignature, alg, spec.sigLen, len(sig))
	}
	var digest []byte
	if spec.hash != 0 {
		h := spec.hash.New()
		h.Write(msg)
		digest = h.Sum(nil)
	}
	ok := false
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		half := len(sig) / 2
		r := new(big.Int).SetBytes(sig[:half])
		s := new(big.Int).SetBytes(sig[half:])
		ok = ecdsa.Verify(k, digest, r, s)
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, msg, sig)
	case *rsa.PublicKey:
		if spec.pss {
			ok = rsa.VerifyPSS(k, spec.hash, digest, sig, &rsa.PSSOptions{SaltLength: spec.hash.Size()}) == nil
		} else {
			ok = rsa.VerifyPKCS1v15(k, spec.hash, digest, sig) == nil
		}
	}
	if !ok {
		return errBadSignature
	}
	return nil
}

// primitiveVerifier plugs verifyPrimitive into go-jose as an OpaqueVerifier:
// go-jose parses the compact JWS and builds the signing input, this checks
// the signature with the one trusted key and the header's algorithm.
type primitiveVerifier struct {
	alg string
	pub crypto.PublicKey
}

func (p primitiveVerifier) VerifyPayload(signingInput, sig []byte, alg jose.SignatureAlgorithm) error {
	if string(alg) != p.alg {
		return fmt.Errorf("%w: header algorithm changed to %s", errBadSignature, alg)
	}
	return verifyPrimitive(p.alg, p.pub, signingInput, sig)
}
