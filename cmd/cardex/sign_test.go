package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/agentcard/strictjson"
	"github.com/go-jose/go-jose/v4"
)

const cryptoSHA256 = crypto.SHA256

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func protectedOf(t *testing.T, signed string, i int) string {
	t.Helper()
	tree, err := strictjson.Parse([]byte(signed))
	if err != nil {
		t.Fatalf("signed output: %v\n%s", err, signed)
	}
	b, err := base64.RawURLEncoding.DecodeString(tree.Get("signatures").Array[i].Get("protected").String)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSignDefaultsAndOptions(t *testing.T) {
	keyPath, _, kid := newSigningKey(t)
	card := writeFile(t, "card.json", cliCard)
	code, out, errs := runCLI(t, "", "sign", "--key", keyPath, card)
	if code != exitOK || errs != "" {
		t.Fatalf("code=%d %s", code, errs)
	}
	if got := protectedOf(t, out, 0); got != `{"alg":"ES256","kid":"`+kid+`","typ":"JOSE"}` {
		t.Fatalf("header %s", got)
	}
	// The card's members are kept in order, signatures last; output is
	// indented JSON ending in a newline.
	if !strings.HasPrefix(out, "{\n  \"name\": \"CLI Agent\",") || !strings.HasSuffix(out, "}\n") {
		t.Fatalf("output:\n%s", out)
	}
	code, out, _ = runCLI(t, "", "sign", card, "--key", keyPath, "--kid", "key-2026", "--jku", "https://cli.example/jwks.json", "--alg", "es256")
	if code != exitOK || protectedOf(t, out, 0) != `{"alg":"ES256","kid":"key-2026","typ":"JOSE","jku":"https://cli.example/jwks.json"}` {
		t.Fatalf("code=%d %s", code, out)
	}
	// Signing a signed card appends.
	code, out2, _ := runCLI(t, out, "sign", "--key", keyPath, "-")
	if code != exitOK || protectedOf(t, out2, 1) == "" {
		t.Fatalf("append: code=%d", code)
	}
}

func TestSignWithJWKKey(t *testing.T) {
	var k struct {
		Private json.RawMessage `json:"private_jwk"`
		JWKS    json.RawMessage `json:"jwks"`
	}
	raw, _ := os.ReadFile("../../verifier/testdata/signing/generated_test_key_es256.json")
	if err := json.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "sign", "--key", writeFile(t, "k.jwk", string(k.Private)), "--kid", "research-es256-1", writeFile(t, "c.json", cliCard))
	if code != exitOK {
		t.Fatalf("code=%d %s", code, errs)
	}
	code, vout, _ := runCLI(t, "", "verify", "--jwks", writeFile(t, "j.json", string(k.JWKS)), writeFile(t, "s.json", out))
	if code != exitOK {
		t.Fatalf("verify: %s", vout)
	}
}

func TestSignBadInput(t *testing.T) {
	keyPath, _, _ := newSigningKey(t)
	card := writeFile(t, "card.json", cliCard)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(p384.Public())
	pubPEM := writeFile(t, "pub.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	pubJWK, _ := json.Marshal(jose.JSONWebKey{Key: p384.Public()})
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"no key", []string{"sign", card}, "--key and exactly one card"},
		{"no card", []string{"sign", "--key", keyPath}, "--key and exactly one card"},
		{"missing key file", []string{"sign", "--key", "/nonexistent/k.pem", card}, "--key"},
		{"public PEM", []string{"sign", "--key", pubPEM, card}, "unsupported signing key"},
		{"public JWK", []string{"sign", "--key", writeFile(t, "p.jwk", string(pubJWK)), card}, "no private part"},
		{"alg not fitting key", []string{"sign", "--key", keyPath, "--alg", "ES384", card}, "does not fit"},
		{"unknown alg", []string{"sign", "--key", keyPath, "--alg", "HS256", card}, "not one of"},
		{"not JSON", []string{"sign", "--key", keyPath, writeFile(t, "n.json", "{")}, "unexpected end"},
		{"array card", []string{"sign", "--key", keyPath, writeFile(t, "a.json", "[]")}, "not a JSON object"},
		{"bad flag", []string{"sign", "--nope"}, "flag provided but not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", c.args...)
			if code != exitUsage || out != "" || !strings.Contains(errs, c.err) {
				t.Fatalf("code=%d stdout=%q stderr=%q", code, out, errs)
			}
		})
	}
}
