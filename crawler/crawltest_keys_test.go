package crawler_test

import (
	"crypto"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/verifier"
)

// signingKey is a P-256 key with its public JWK (kid = RFC 7638 thumbprint).
type signingKey struct {
	priv crypto.Signer
	jwk  jose.JSONWebKey
}

func newSigningKey(t testing.TB) signingKey {
	t.Helper()
	priv, err := agentfleet.NewSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: priv.Public(), Algorithm: "ES256", Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	return signingKey{priv: priv, jwk: jwk}
}

// sign signs card with k, naming jku ("" for none).
func (k signingKey) sign(t testing.TB, card []byte, jku string) []byte {
	t.Helper()
	out, err := verifier.Sign(card, k.priv, verifier.SignOptions{Kid: k.jwk.KeyID, Jku: jku})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jwks(t testing.TB, keys ...signingKey) []byte {
	t.Helper()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.jwk)
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
