package verifier

import (
	"strings"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
)

// signedVariant signs card (spec profile) and returns the signature entry,
// so it can be attached to another spelling of the same card.
func signedEntry(t *testing.T, card string) (entry string, jwks []byte) {
	t.Helper()
	k := mustKey(t, "Ed25519")
	p, s := signWith(t, card, k, "EdDSA", `{"alg":"EdDSA","kid":"k"}`)
	return sigEntry(p, s), publicJWKS(t, k, "k", "")
}

func assertSameCanonical(t *testing.T, a, b string) {
	t.Helper()
	for _, p := range []Profile{ProfileSpec, ProfileSpecV1Only, ProfileSDK, ProfileRaw} {
		if ca, cb := canon(t, p, []byte(a)), canon(t, p, []byte(b)); ca != cb {
			t.Fatalf("%s differs:\n%s\n%s", p, ca, cb)
		}
	}
}

func verifiesAs(t *testing.T, card, entry string, jwks []byte) Verdict {
	t.Helper()
	return verifyString(t, New(Config{}), withSignatures(card, "["+entry+"]"), VerifyOptions{Pinned: jwks})
}

func extCard(params string) string {
	return `{"name":"N","description":"d","capabilities":{"extensions":[{"uri":"urn:x","params":` + params + `}]},"skills":[]}`
}

// E.54: number spellings canonicalize to their ECMAScript form, so a
// signature made over one spelling verifies the other.
func TestE54NumberSpellings(t *testing.T) {
	a := extCard(`{"a":1e6,"b":4.50,"c":1E30,"d":-0,"e":0.000001,"f":1e-7,"g":333333333.33333329,"h":100.0}`)
	b := extCard(`{"a":1000000,"b":4.5,"c":1e+30,"d":0,"e":1e-6,"f":1E-7,"g":333333333.3333333,"h":100}`)
	assertSameCanonical(t, a, b)
	want := `{"capabilities":{"extensions":[{"params":{"a":1000000,"b":4.5,"c":1e+30,"d":0,"e":0.000001,"f":1e-7,"g":333333333.3333333,"h":100},"uri":"urn:x"}]},"description":"d","name":"N","skills":[]}`
	if got := canon(t, ProfileSpec, []byte(a)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	entry, jwks := signedEntry(t, a)
	if v := verifiesAs(t, b, entry, jwks); v.Status != StatusVerified || v.Profile != "spec" {
		t.Fatalf("%+v", v)
	}
}

// E.55: 1e400 never reaches the verifier (strict parse rejects it); an
// integer beyond 2^53 is canonicalized with IEEE rounding, the value shown
// being exactly what was canonicalized.
func TestE55OutOfRangeNumbers(t *testing.T) {
	for _, n := range []string{"1e400", "-1e400"} {
		if _, err := strictjson.Parse([]byte(extCard(`{"n":` + n + `}`))); err == nil {
			t.Fatalf("%s parsed", n)
		}
	}
	got := canon(t, ProfileSpec, []byte(extCard(`{"n":9007199254740993}`)))
	if !strings.Contains(got, `"n":9007199254740992`) {
		t.Fatalf("got %s", got)
	}
}

// E.56: escaping variants give identical canonical bytes and verify.
func TestE56EscapingVariants(t *testing.T) {
	a := `{"name":"Caf\u00e9 \/ \u000F \u0041","description":"\ud83d\ude00","skills":[]}`
	b := "{\"name\":\"Café / \\u000f A\",\"description\":\"😀\",\"skills\":[]}"
	assertSameCanonical(t, a, b)
	entry, jwks := signedEntry(t, a)
	if v := verifiesAs(t, b, entry, jwks); v.Status != StatusVerified {
		t.Fatalf("%+v", v)
	}
}

// E.57: NFC and NFD spellings differ; a signature over one does not verify
// the other (the verifier never normalizes).
func TestE57UnicodeNormalizationMatters(t *testing.T) {
	nfc := "{\"name\":\"Caf\u00e9\",\"description\":\"d\",\"skills\":[]}"
	nfd := "{\"name\":\"Cafe\u0301\",\"description\":\"d\",\"skills\":[]}"
	if canon(t, ProfileSpec, []byte(nfc)) == canon(t, ProfileSpec, []byte(nfd)) {
		t.Fatal("NFC and NFD canonicalize alike")
	}
	entry, jwks := signedEntry(t, nfc)
	if v := verifiesAs(t, nfd, entry, jwks); v.Status != StatusInvalid {
		t.Fatalf("%+v", v)
	}
	if v := verifiesAs(t, nfc, entry, jwks); v.Status != StatusVerified {
		t.Fatalf("control: %+v", v)
	}
}

// E.58: member order does not matter; keys that exercise UTF-16 ordering.
func TestE58KeyOrder(t *testing.T) {
	a := "{\"name\":\"N\",\"description\":\"d\",\"skills\":[],\"x\":{\"\\r\":1,\"1\":2,\"\u20ac\":3,\"\U0001F600\":4,\"\uFB33\":5,\"10\":6,\"a\":7,\"A\":8}}"
	b := "{\"x\":{\"A\":8,\"a\":7,\"\uFB33\":5,\"\U0001F600\":4,\"10\":6,\"\u20ac\":3,\"1\":2,\"\\r\":1},\"skills\":[],\"description\":\"d\",\"name\":\"N\"}"
	assertSameCanonical(t, a, b)
	want := "{\"description\":\"d\",\"name\":\"N\",\"skills\":[],\"x\":{\"\\r\":1,\"1\":2,\"10\":6,\"A\":8,\"a\":7,\"\u20ac\":3,\"\U0001F600\":4,\"\uFB33\":5}}"
	if got := canon(t, ProfileSpec, []byte(a)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	entry, jwks := signedEntry(t, a)
	if v := verifiesAs(t, b, entry, jwks); v.Status != StatusVerified {
		t.Fatalf("%+v", v)
	}
}

// E.59, both orderings: the signer omitted `"extensions": []` but the
// served card has it (spec presence rules verify); and a signer that signed
// the raw bytes with the empty member, verified by the raw profile. Explicit
// `"streaming": false` and `"description": ""` are signed content.
func TestE59DefaultValueHandling(t *testing.T) {
	k := mustKey(t, "P-256")
	jwks := publicJWKS(t, k, "k", "")
	hdr := `{"alg":"ES256","kid":"k"}`
	signedWithout := `{"name":"N","description":"","capabilities":{"streaming":false},"skills":[]}`
	servedWith := `{"name":"N","description":"","capabilities":{"streaming":false,"extensions":[]},"skills":[]}`

	p, s := signProfile(t, ProfileRaw, signedWithout, k, "ES256", hdr)
	if v := verifiesAs(t, servedWith, sigEntry(p, s), jwks); v.Status != StatusVerified || v.Profile != "spec" {
		t.Fatalf("signer omitted, served with: %+v", v)
	}
	p, s = signProfile(t, ProfileRaw, servedWith, k, "ES256", hdr)
	if v := verifiesAs(t, servedWith, sigEntry(p, s), jwks); v.Status != StatusVerified || v.Profile != "raw" {
		t.Fatalf("signer kept, served with: %+v", v)
	}
	// Dropping the signed explicit defaults breaks the signature.
	p, s = signWith(t, servedWith, k, "ES256", hdr)
	for _, served := range []string{
		`{"name":"N","description":"","capabilities":{},"skills":[]}`,
		`{"name":"N","capabilities":{"streaming":false},"skills":[]}`,
	} {
		if v := verifiesAs(t, served, sigEntry(p, s), jwks); v.Status != StatusInvalid {
			t.Fatalf("%s: %+v", served, v)
		}
	}
}

// E.60: only the top-level `signatures` is excluded; a nested one is signed
// content, and a duplicated top-level one is a parse error.
func TestE60NestedAndDuplicateSignatures(t *testing.T) {
	card := `{"name":"N","description":"d","skills":[{"id":"s","signatures":["x"]}]}`
	if got := canon(t, ProfileSpec, []byte(card)); !strings.Contains(got, `"signatures":["x"]`) {
		t.Fatalf("nested signatures dropped: %s", got)
	}
	entry, jwks := signedEntry(t, card)
	tampered := strings.Replace(card, `["x"]`, `["y"]`, 1)
	if v := verifiesAs(t, tampered, entry, jwks); v.Status != StatusInvalid {
		t.Fatalf("%+v", v)
	}
	if _, err := strictjson.Parse([]byte(`{"name":"N","signatures":[],"signatures":[]}`)); err == nil {
		t.Fatal("duplicate top-level signatures parsed")
	}
}
