package verifier

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/cardexhq/cardex/strictjson"
	"github.com/go-jose/go-jose/v4"
)

// SignOptions are the protected header choices of Sign.
type SignOptions struct {
	Kid string // default: the key's RFC 7638 thumbprint (docs/configuration.md)
	Jku string // optional JWKS URL; it must be on the agent's origin to be trusted
	Alg string // default from the key: P-256 ES256, P-384 ES384, P-521 ES512, Ed25519 EdDSA, RSA RS256
	// Profile is the canonical form signed (default ProfileSpec). Use
	// PreparePortable first for a signature every profile verifies.
	Profile Profile
}

// Sign signs card (JSON text) under opts.Profile (the spec profile by
// default) and returns the card with
// the new entry appended to `signatures` (created when absent). The protected
// header is {"alg","kid","typ":"JOSE"[,"jku"]} (A2A §8.4.2). The card is
// rebuilt from its strict tree, so members keep their order and values;
// existing signatures stay and are not covered (spec §8.4.1 rule 3).
// key is a crypto.Signer (*ecdsa.PrivateKey, ed25519.PrivateKey,
// *rsa.PrivateKey) or a private jose.JSONWebKey.
func Sign(card []byte, key any, opts SignOptions) ([]byte, error) {
	tree, err := strictjson.Parse(card)
	if err != nil {
		return nil, err
	}
	if tree.Kind != strictjson.Object {
		return nil, ErrNotObject
	}
	signer, jwkAlg, err := signerOf(key)
	if err != nil {
		return nil, err
	}
	pub := signer.Public()
	alg := opts.Alg
	if alg == "" {
		alg = jwkAlg
	}
	if alg == "" {
		if alg, err = defaultAlg(pub); err != nil {
			return nil, err
		}
	}
	if err := checkKey(alg, pub); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAlgKeyMismatch, err)
	}
	kid := opts.Kid
	if kid == "" {
		tp, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
		}
		kid = base64.RawURLEncoding.EncodeToString(tp)
	}
	if len(kid) > maxKidBytes {
		return nil, fmt.Errorf("verifier: kid is longer than %d bytes", maxKidBytes)
	}
	var sigs *strictjson.Value
	if sigs = tree.Get("signatures"); sigs != nil && sigs.Kind != strictjson.Array {
		return nil, ErrBadSignatures
	}
	profile := opts.Profile
	if profile == "" {
		profile = ProfileSpec
	}
	payload, err := Canonicalize(profile, tree)
	if err != nil {
		return nil, err
	}

	hdr := &strictjson.Value{Kind: strictjson.Object}
	addString(hdr, "alg", alg)
	addString(hdr, "kid", kid)
	addString(hdr, "typ", "JOSE")
	if opts.Jku != "" {
		addString(hdr, "jku", opts.Jku)
	}
	protected := base64.RawURLEncoding.EncodeToString(strictjson.Marshal(hdr))
	signingInput := protected + "." + base64.RawURLEncoding.EncodeToString(payload)
	sig, err := signRaw(signer, alg, []byte(signingInput))
	if err != nil {
		return nil, err
	}
	// Check our own output through the verifying path before handing it out.
	if err := verifyPrimitive(alg, pub, []byte(signingInput), sig); err != nil {
		return nil, fmt.Errorf("verifier: fresh signature does not verify: %w", err)
	}

	entry := &strictjson.Value{Kind: strictjson.Object}
	addString(entry, "protected", protected)
	addString(entry, "signature", base64.RawURLEncoding.EncodeToString(sig))
	if sigs == nil {
		sigs = &strictjson.Value{Kind: strictjson.Array}
		tree.Object = append(tree.Object, strictjson.Member{Key: "signatures", Value: sigs})
	}
	sigs.Array = append(sigs.Array, entry)
	return strictjson.Marshal(tree), nil
}

func addString(obj *strictjson.Value, key, s string) {
	obj.Object = append(obj.Object, strictjson.Member{Key: key, Value: &strictjson.Value{Kind: strictjson.String, String: s}})
}

// signerOf accepts the supported private key forms and returns the key's
// declared JWK alg, if any.
func signerOf(key any) (crypto.Signer, string, error) {
	switch k := key.(type) {
	case jose.JSONWebKey:
		return signerOf(&k)
	case *jose.JSONWebKey:
		if k == nil || k.IsPublic() {
			return nil, "", fmt.Errorf("%w: JWK is not a private key", ErrUnsupportedKey)
		}
		s, _, err := signerOf(k.Key)
		return s, k.Algorithm, err
	case *ecdsa.PrivateKey, *rsa.PrivateKey:
		return k.(crypto.Signer), "", nil
	case ed25519.PrivateKey:
		return k, "", nil
	case *ed25519.PrivateKey:
		return *k, "", nil
	}
	return nil, "", fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}

// defaultAlg is the alg docs/configuration.md assigns to a key.
func defaultAlg(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", fmt.Errorf("%w: curve %s", ErrUnsupportedKey, k.Curve.Params().Name)
	case ed25519.PublicKey:
		return "EdDSA", nil
	case *rsa.PublicKey:
		return "RS256", nil
	}
	return "", fmt.Errorf("%w: %T", ErrUnsupportedKey, pub)
}

// signRaw produces the JWS signature bytes; ECDSA signatures are converted
// from ASN.1 to raw r‖s (RFC 7518 §3.4).
func signRaw(signer crypto.Signer, alg string, input []byte) ([]byte, error) {
	spec := allowedAlgs[alg]
	if spec.kty == "OKP" {
		return signer.Sign(nil, input, crypto.Hash(0))
	}
	h := spec.hash.New()
	h.Write(input)
	digest := h.Sum(nil)
	switch k := signer.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return nil, err
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*size)
		r.FillBytes(out[:size])
		s.FillBytes(out[size:])
		return out, nil
	case *rsa.PrivateKey:
		if spec.pss {
			return rsa.SignPSS(rand.Reader, k, spec.hash, digest, &rsa.PSSOptions{SaltLength: spec.hash.Size()})
		}
		return rsa.SignPKCS1v15(rand.Reader, k, spec.hash, digest)
	}
	return nil, fmt.Errorf("%w: %T", ErrUnsupportedKey, signer)
}

// ParseAlg normalizes a user-supplied algorithm name.
func ParseAlg(s string) (string, error) {
	for name := range allowedAlgs {
		if strings.EqualFold(name, s) {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not one of ES256, ES384, ES512, EdDSA, RS256, RS384, RS512, PS256, PS384, PS512", ErrUnsupportedAlg, s)
}
