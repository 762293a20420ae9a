package verifier

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
	"github.com/go-jose/go-jose/v4"
)

const sampleCard = `{"name":"Route Planner","description":"Plans routes","version":"1.2.0",
"supportedInterfaces":[{"url":"https://agent.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}],
"provider":{"organization":"Example","url":"https://example.com"},
"capabilities":{"streaming":false,"extensions":[{"uri":"urn:x","params":{"n":1.50,"s":""}}]},
"defaultInputModes":["text/plain"],"defaultOutputModes":["application/json"],
"skills":[{"id":"route","name":"Route","description":"Find a route","tags":["maps"],"examples":[]}],
"x-vendor":{"note":"é"}}`

func mustKey(t testing.TB, kind string) crypto.Signer {
	t.Helper()
	var (
		k   crypto.Signer
		err error
	)
	switch kind {
	case "P-256":
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "P-384":
		k, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "P-521":
		k, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "Ed25519":
		_, k, err = ed25519.GenerateKey(rand.Reader)
	case "RSA":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil || k == nil {
		t.Fatalf("generate %s: %v", kind, err)
	}
	return k
}

// publicJWKS returns the JWKS publishing signer's public key under kid.
func publicJWKS(t testing.TB, signer crypto.Signer, kid, alg string) []byte {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: signer.Public(), KeyID: kid, Algorithm: alg, Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func thumbprintOf(t testing.TB, pub crypto.PublicKey) string {
	t.Helper()
	tp, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

func TestSignVerifyRoundTrip(t *testing.T) {
	cases := []struct{ key, alg, wantAlg string }{
		{"P-256", "", "ES256"}, {"P-384", "", "ES384"}, {"P-521", "", "ES512"},
		{"Ed25519", "", "EdDSA"}, {"RSA", "", "RS256"}, {"RSA", "PS256", "PS256"},
	}
	for _, c := range cases {
		t.Run(c.wantAlg, func(t *testing.T) {
			k := mustKey(t, c.key)
			signed, err := Sign([]byte(sampleCard), k, SignOptions{Alg: c.alg})
			if err != nil {
				t.Fatal(err)
			}
			tp := thumbprintOf(t, k.Public())
			v := New(Config{}).Verify(t.Context(), parseTree(t, signed), VerifyOptions{Pinned: publicJWKS(t, k, tp, "")})
			if v.Status != StatusVerified || v.Profile != "spec" {
				t.Fatalf("%+v", v)
			}
			s := v.Signatures[0]
			if s.Alg != c.wantAlg || s.Kid != tp || s.KeySource != SourcePinned || v.Thumbprints[0] != tp {
				t.Fatalf("%+v", s)
			}
			hdr, _ := base64.RawURLEncoding.DecodeString(parseTree(t, signed).Get("signatures").Array[0].Get("protected").String)
			if want := `{"alg":"` + c.wantAlg + `","kid":"` + tp + `","typ":"JOSE"}`; string(hdr) != want {
				t.Fatalf("protected header %s, want %s", hdr, want)
			}
		})
	}
}

// Sign keeps the card's members, order and literals, and appends to an
// existing signatures array.
func TestSignKeepsCardAndAppends(t *testing.T) {
	k := mustKey(t, "P-256")
	once, err := Sign([]byte(sampleCard), k, SignOptions{Kid: "k1", Jku: "https://agent.example/jwks.json"})
	if err != nil {
		t.Fatal(err)
	}
	orig := parseTree(t, []byte(sampleCard))
	got := parseTree(t, once)
	if len(got.Object) != len(orig.Object)+1 || got.Object[len(got.Object)-1].Key != "signatures" {
		t.Fatalf("members: %d vs %d", len(got.Object), len(orig.Object))
	}
	for i, m := range orig.Object {
		if got.Object[i].Key != m.Key || string(strictjson.Marshal(got.Object[i].Value)) != string(strictjson.Marshal(m.Value)) {
			t.Fatalf("member %d changed: %s", i, m.Key)
		}
	}
	twice, err := Sign(once, mustKey(t, "Ed25519"), SignOptions{Kid: "k2"})
	if err != nil {
		t.Fatal(err)
	}
	sigs := parseTree(t, twice).Get("signatures").Array
	if len(sigs) != 2 {
		t.Fatalf("want 2 signatures, got %d", len(sigs))
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(sigs[0].Get("protected").String)
	if string(hdr) != `{"alg":"ES256","kid":"k1","typ":"JOSE","jku":"https://agent.example/jwks.json"}` {
		t.Fatalf("header %s", hdr)
	}
	// The first signature still verifies: signatures are not signed content.
	v := New(Config{}).Verify(t.Context(), parseTree(t, twice), VerifyOptions{Pinned: publicJWKS(t, k, "k1", "ES256")})
	if v.Status != StatusVerified || v.Signatures[0].Status != StatusVerified || v.Signatures[1].Status != StatusError {
		t.Fatalf("%+v", v)
	}
}

// Changing any signed member makes the signature invalid.
func TestTamperingAnySignedMemberIsInvalid(t *testing.T) {
	k := mustKey(t, "P-256")
	signed, err := Sign([]byte(sampleCard), k, SignOptions{Kid: "k"})
	if err != nil {
		t.Fatal(err)
	}
	jwks := publicJWKS(t, k, "k", "ES256")
	tamper := []struct{ old, new string }{
		{`"Route Planner"`, `"Route PlannEr"`},
		{`"Plans routes"`, `"Plans routes!"`},
		{`"1.2.0"`, `"1.2.1"`},
		{`"https://agent.example/a2a"`, `"https://evil.example/a2a"`},
		{`"Example"`, `"Exampl3"`},
		{`"streaming":false`, `"streaming":true`},
		{`1.50`, `1.51`},
		{`"maps"`, `"mapz"`},
		{`"text/plain"`, `"text/html"`},
		{`"note":"é"`, `"note":"e"`},
		{`"tenant":""`, `"tenant":"t"`},
	}
	for _, c := range tamper {
		if !strings.Contains(string(signed), c.old) {
			t.Fatalf("signed card lacks %s", c.old)
		}
		bad := strings.Replace(string(signed), c.old, c.new, 1)
		v := New(Config{}).Verify(t.Context(), parseTree(t, []byte(bad)), VerifyOptions{Pinned: jwks})
		if v.Status != StatusInvalid || v.Signatures[0].Status != StatusInvalid {
			t.Errorf("%s → %s: %+v", c.old, c.new, v)
		}
	}
}

func TestSignRejectsAlgNotFittingKey(t *testing.T) {
	cases := []struct{ key, alg string }{
		{"P-256", "ES384"}, {"P-384", "ES256"}, {"Ed25519", "ES256"}, {"RSA", "EdDSA"}, {"P-256", "RS256"},
	}
	for _, c := range cases {
		if _, err := Sign([]byte(sampleCard), mustKey(t, c.key), SignOptions{Alg: c.alg}); !errors.Is(err, ErrAlgKeyMismatch) {
			t.Errorf("%s with %s: err=%v", c.alg, c.key, err)
		}
	}
	if _, err := Sign([]byte(sampleCard), mustKey(t, "P-256"), SignOptions{Alg: "HS256"}); err == nil {
		t.Error("HS256 accepted")
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sign([]byte(sampleCard), small, SignOptions{}); !errors.Is(err, ErrAlgKeyMismatch) {
		t.Errorf("1024-bit RSA: err=%v", err)
	}
	if _, err := Sign([]byte(`[1]`), mustKey(t, "P-256"), SignOptions{}); !errors.Is(err, ErrNotObject) {
		t.Errorf("array card: err=%v", err)
	}
	if _, err := Sign([]byte(`{"signatures":{}}`), mustKey(t, "P-256"), SignOptions{}); !errors.Is(err, ErrBadSignatures) {
		t.Errorf("object signatures: err=%v", err)
	}
	if _, err := Sign([]byte(sampleCard), "not a key", SignOptions{}); !errors.Is(err, ErrUnsupportedKey) {
		t.Errorf("string key: err=%v", err)
	}
}

func TestLoadSigningKeyForms(t *testing.T) {
	ec := mustKey(t, "P-384").(*ecdsa.PrivateKey)
	rk := mustKey(t, "RSA").(*rsa.PrivateKey)
	ed := mustKey(t, "Ed25519")
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ed)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	forms := map[string][]byte{
		"PKCS#8 Ed25519": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
		"SEC1 EC":        pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}),
		"PKCS#1 RSA":     pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}),
		"JWK ES256":      readJWKPrivate(t),
	}
	wantAlg := map[string]string{"PKCS#8 Ed25519": "EdDSA", "SEC1 EC": "ES384", "PKCS#1 RSA": "RS256", "JWK ES256": "ES256"}
	for name, data := range forms {
		k, err := LoadSigningKey(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		signed, err := Sign([]byte(sampleCard), k, SignOptions{Kid: "x"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if alg := parseTree(t, signed).Get("signatures").Array[0].Get("protected").String; !strings.Contains(decodeHdr(t, alg), `"alg":"`+wantAlg[name]+`"`) {
			t.Errorf("%s: header %s", name, decodeHdr(t, alg))
		}
	}
	pubPEM, _ := x509.MarshalPKIXPublicKey(ec.Public())
	for name, data := range map[string][]byte{
		"public PEM": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubPEM}),
		"public JWK": []byte(`{"kty":"OKP","crv":"Ed25519","x":"HPZl5kjLaWKcAp5QBiOWueZa0MyB5U6CGj0M6xZN4W4"}`),
		"garbage":    []byte("hello"),
	} {
		if _, err := LoadSigningKey(data); !errors.Is(err, ErrUnsupportedKey) {
			t.Errorf("%s: err=%v", name, err)
		}
	}
}

func readJWKPrivate(t testing.TB) []byte {
	var k struct {
		Private json.RawMessage `json:"private_jwk"`
	}
	if err := json.Unmarshal(readFile(t, "testdata/signing/generated_test_key_es256.json"), &k); err != nil {
		t.Fatal(err)
	}
	return k.Private
}

func decodeHdr(t testing.TB, b64 string) string {
	b, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseAlg(t *testing.T) {
	for in, want := range map[string]string{"es256": "ES256", "EdDSA": "EdDSA", "eddsa": "EdDSA", "ps512": "PS512"} {
		if got, err := ParseAlg(in); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "none", "HS256", "ES256K", "RSA-OAEP"} {
		if _, err := ParseAlg(bad); !errors.Is(err, ErrUnsupportedAlg) {
			t.Errorf("%q: err=%v", bad, err)
		}
	}
}
