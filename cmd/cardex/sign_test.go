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
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
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

// `cardex sign` refuses what `cardex lint` rejects, with lint's errors on
// stderr, exit 1 and nothing on stdout; a card lint accepts still signs,
// and verifies.
func TestSignRefusesWhatLintRejects(t *testing.T) {
	keyPath, jwks, _ := newSigningKey(t)
	noEndpoint := `{"name":"No Door","description":"Lists skills but no endpoint","version":"1.0.0",
  "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
  "skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`
	cases := []struct {
		name, card, stderr string
	}{
		{"empty object", "{}", "cardex sign: %s: not signed: `cardex lint` finds 1 error:\n" +
			"error not-a-card /: the object has none of the members that make an A2A agent card (supportedInterfaces, url, skills, defaultInputModes, securitySchemes, …)\n"},
		{"no endpoint", noEndpoint, "cardex sign: %s: not signed: `cardex lint` finds 1 error:\n" +
			"error no-endpoint /supportedInterfaces: the card lists no A2A endpoint: clients cannot reach the agent\n"},
		{"not JSON", "{", "cardex sign: %s: not signed: `cardex lint` finds 1 error:\n" +
			"error invalid-json /: unexpected end of input in object at byte 1\n"},
		{"array", "[]", "cardex sign: %s: not signed: `cardex lint` finds 1 error:\n" +
			"error not-an-object /: an agent card is a JSON object, this document is an array\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := writeFile(t, "card.json", c.card)
			if code, _, _ := runCLI(t, "", "lint", file); code != exitFail {
				t.Fatalf("lint accepts the card: exit %d", code)
			}
			code, out, errs := runCLI(t, "", "sign", "--key", keyPath, file)
			if code != exitFail || out != "" || errs != fmt.Sprintf(c.stderr, file) {
				t.Fatalf("code=%d stdout=%q stderr=%q", code, out, errs)
			}
			// From stdin too.
			code, out, errs = runCLI(t, c.card, "sign", "--key", keyPath, "-")
			if code != exitFail || out != "" || errs != fmt.Sprintf(c.stderr, "-") {
				t.Fatalf("stdin: code=%d stdout=%q stderr=%q", code, out, errs)
			}
		})
	}
	card := writeFile(t, "card.json", cliCard)
	if code, out, _ := runCLI(t, "", "lint", card); code != exitOK {
		t.Fatalf("lint rejects the valid card: %s", out)
	}
	code, signed, errs := runCLI(t, "", "sign", "--key", keyPath, card)
	if code != exitOK || errs != "" {
		t.Fatalf("valid card: code=%d stderr=%q", code, errs)
	}
	code, vout, verrs := runCLI(t, "", "verify", "--jwks", writeFile(t, "jwks.json", string(jwks)), writeFile(t, "signed.json", signed))
	if code != exitOK {
		t.Fatalf("verify of the signed card: code=%d %s %s", code, vout, verrs)
	}
}
