package verifier

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// LoadSigningKey reads a private key for Sign: a PEM block (PKCS#8 "PRIVATE
// KEY", SEC1 "EC PRIVATE KEY", PKCS#1 "RSA PRIVATE KEY") or a private JWK.
// The result is a *jose.JSONWebKey for JWK input (keeping its alg) or the
// crypto.Signer of the PEM key.
func LoadSigningKey(data []byte) (any, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(trimmed); err != nil {
			return nil, fmt.Errorf("%w: JWK: %v", ErrUnsupportedKey, err)
		}
		if k.IsPublic() {
			return nil, fmt.Errorf("%w: JWK has no private part", ErrUnsupportedKey)
		}
		if _, _, err := signerOf(&k); err != nil {
			return nil, err
		}
		return &k, nil
	}
	block, _ := pem.Decode(trimmed)
	if block == nil {
		return nil, fmt.Errorf("%w: neither a PEM block nor a JWK", ErrUnsupportedKey)
	}
	var (
		key any
		err error
	)
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM block %q", ErrUnsupportedKey, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}
