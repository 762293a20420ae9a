package verifier

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// rsaKeyBits is the size GenerateKey gives RSA keys: above the 2048-bit
// floor, as current guidance asks for keys meant to last.
const rsaKeyBits = 3072

// GenerateKey creates a signing key for alg: a P-256, P-384 or P-521 key
// for ES256, ES384, ES512, an Ed25519 key for EdDSA, a 3072-bit RSA key for
// RS* and PS*.
func GenerateKey(alg string) (crypto.Signer, error) {
	spec, ok := allowedAlgs[alg]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlg, alg)
	}
	switch spec.kty {
	case "EC":
		return ecdsa.GenerateKey(spec.curve, rand.Reader)
	case "OKP":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
	return rsa.GenerateKey(rand.Reader, rsaKeyBits)
}

// MarshalPrivateKeyPEM encodes a key from GenerateKey as a PKCS#8 PEM
// block, which LoadSigningKey (and `cardex sign --key`) reads back.
func MarshalPrivateKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// PublicJWKS is the JWK Set a publisher serves at
// /.well-known/jwks.json for key (anything LoadSigningKey returns): the
// public key only, with "use":"sig", its alg (alg, else the key's JWK alg,
// else the default for the key) and kid (kid, else the RFC 7638
// thumbprint, which is also `cardex sign`'s default kid).
func PublicJWKS(key any, kid, alg string) ([]byte, error) {
	signer, jwkAlg, err := signerOf(key)
	if err != nil {
		return nil, err
	}
	pub := signer.Public()
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
	jwk := jose.JSONWebKey{Key: pub, Algorithm: alg, Use: "sig", KeyID: kid}
	if jwk.KeyID == "" {
		tp, err := jwk.Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
		}
		jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	}
	b, err := json.MarshalIndent(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := CheckKeySet(b); err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
