package agentfleet

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/cardexhq/cardex/strictjson"
)

// Signer signs a card: it returns the card with a signature (A2A §8.4,
// detached JWS over the canonical form) whose protected header carries kid
// and jku. The fleet does not canonicalize by itself; plug in the
// verifier's Sign:
//
//	func(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
//		return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
//	}
type Signer func(card []byte, key crypto.Signer, kid, jku string) ([]byte, error)

// ErrNoSigner: a signed behaviour was asked of a fleet without Options.Signer.
var ErrNoSigner = errors.New("agentfleet: signed agents need Options.Signer")

// NewSigningKey returns a fresh P-256 key (ES256).
func NewSigningKey() (crypto.Signer, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// Alg is the JWS algorithm for key (docs/configuration.md defaults).
func Alg(key crypto.Signer) (string, error) {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
	case ed25519.PublicKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("agentfleet: unsupported key type %T", key.Public())
}

// publicJWK returns the public JWK of key with its RFC 7638 thumbprint as
// kid (the `cardex sign` default, docs/configuration.md).
func publicJWK(key crypto.Signer) (jose.JSONWebKey, error) {
	alg, err := Alg(key)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	jwk := jose.JSONWebKey{Key: key.Public(), Algorithm: alg, Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	return jwk, nil
}

// jwksJSON serves keys as an RFC 7517 key set.
func jwksJSON(keys []jose.JSONWebKey) []byte {
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		panic(err) // public EC and OKP keys always marshal
	}
	return b
}

// tamper changes one member of a signed card after signing, so the
// signature no longer matches (the "tampered" behaviour).
func tamper(card []byte) ([]byte, error) {
	v, err := strictjson.Parse(card)
	if err != nil {
		return nil, fmt.Errorf("agentfleet: tamper: %w", err)
	}
	for _, name := range []string{"description", "name"} {
		if m := v.Get(name); m != nil && m.Kind == strictjson.String {
			m.String += " (tampered)"
			return strictjson.Marshal(v), nil
		}
	}
	return nil, errors.New("agentfleet: tamper: card has no description or name string")
}

// withVersion returns card with its top-level "version" set to version
// (the "changing" behaviour on a caller-supplied card).
func withVersion(card []byte, version string) ([]byte, error) {
	v, err := strictjson.Parse(card)
	if err != nil {
		return nil, fmt.Errorf("agentfleet: changing card: %w", err)
	}
	if v.Kind != strictjson.Object {
		return nil, errors.New("agentfleet: changing card: not an object")
	}
	if m := v.Get("version"); m != nil {
		*m = strictjson.Value{Kind: strictjson.String, String: version}
	} else {
		v.Object = append(v.Object, strictjson.Member{Key: "version", Value: &strictjson.Value{Kind: strictjson.String, String: version}})
	}
	return strictjson.Marshal(v), nil
}
