package verifier

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"
)

// docs/threats.md D.39–D.48, C.29, C.31: every malformed or disallowed signature
// is invalid with a reason, never verified and never a panic.
func TestMalformedSignaturesAreInvalid(t *testing.T) {
	k := mustKey(t, "P-256")
	jwks := publicJWKS(t, k, "k", "")
	good := `{"alg":"ES256","kid":"k"}`
	p, s := signWith(t, minimalCard, k, "ES256", good)
	sigBytes, _ := base64.RawURLEncoding.DecodeString(s)
	r, ss := new(big.Int).SetBytes(sigBytes[:32]), new(big.Int).SetBytes(sigBytes[32:])
	der, _ := asn1.Marshal(struct{ R, S *big.Int }{r, ss})
	b64 := base64.RawURLEncoding.EncodeToString
	hdr := func(h string) string { return b64([]byte(h)) }
	pNone, sNone := signWith(t, minimalCard, k, "HS256", `{"alg":"none","kid":"k"}`)
	pHS, sHS := signWith(t, minimalCard, k, "HS256", `{"alg":"HS256","kid":"k"}`)
	pCrit, sCrit := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k","crit":["exp"],"exp":1}`)
	pB64, sB64 := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k","b64":false,"crit":["b64"]}`)
	pB64b, sB64b := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k","b64":false}`)
	cases := map[string]struct{ entry, reason string }{
		"D.39 alg none":              {sigEntry(pNone, sNone), `"none" is not allowed`},
		"D.39 alg None":              {sigEntry(hdr(`{"alg":"None","kid":"k"}`), s), `"None" is not allowed`},
		"D.39 empty alg":             {sigEntry(hdr(`{"alg":"","kid":"k"}`), s), "no alg"},
		"D.39 missing alg":           {sigEntry(hdr(`{"kid":"k"}`), s), "no alg"},
		"D.39 missing signature":     {`{"protected":"` + p + `"}`, "no signature"},
		"D.39 empty signature":       {sigEntry(p, ""), "no signature"},
		"D.40 HS256":                 {sigEntry(pHS, sHS), `"HS256" is not allowed`},
		"D.47 crit":                  {sigEntry(pCrit, sCrit), "crit"},
		"D.47 b64 false with crit":   {sigEntry(pB64, sB64), "crit"},
		"D.47 b64 false":             {sigEntry(pB64b, sB64b), "b64"},
		"D.47 crit unprotected":      {sigEntry(p, s, `"header":{"crit":["x"]}`), "crit in the unprotected header"},
		"D.48 padding protected":     {sigEntry(p+"=", s), "not base64url"},
		"D.48 padding signature":     {sigEntry(p, s+"=="), "not base64url"},
		"D.48 plus":                  {sigEntry(strings.Replace(p, "e", "+", 1), s), "not base64url"},
		"D.48 slash":                 {sigEntry(p, strings.Replace(s, s[:1], "/", 1)), "not base64url"},
		"D.48 whitespace":            {sigEntry(p[:4]+" "+p[4:], s), "not base64url"},
		"D.48 non-canonical bits":    {sigEntry(p, s[:len(s)-1]+"B"), "canonical"},
		"D.48 non-JSON header":       {sigEntry(hdr(`alg=ES256`), s), "not valid JSON"},
		"D.48 header array":          {sigEntry(hdr(`["ES256"]`), s), "not an object"},
		"D.48 DER signature":         {sigEntry(p, b64(der)), "must be 64 bytes"},
		"D.48 65-byte signature":     {sigEntry(p, b64(append(sigBytes, 0))), "must be 64 bytes"},
		"D.45 257-byte kid":          {sigEntry(hdr(`{"alg":"ES256","kid":"`+strings.Repeat("a", 257)+`"}`), s), "longer than 256"},
		"D.45 100 KB kid":            {sigEntry(hdr(`{"alg":"ES256","kid":"`+strings.Repeat("a", 100<<10)+`"}`), s), "larger than 16384 bytes"},
		"D.39 missing kid":           {sigEntry(hdr(`{"alg":"ES256"}`), s), "no kid"},
		"C.29 duplicate alg":         {sigEntry(hdr(`{"alg":"ES256","alg":"none","kid":"k"}`), s), "duplicate key"},
		"C.29 duplicate kid":         {sigEntry(hdr(`{"alg":"ES256","kid":"k","kid":"k"}`), s), "duplicate key"},
		"C.31 invalid UTF-8 header":  {sigEntry(b64([]byte("{\"alg\":\"ES256\",\"kid\":\"\xff\"}")), s), "invalid UTF-8"},
		"C.31 lone surrogate header": {sigEntry(hdr(`{"alg":"ES256","kid":"\ud800"}`), s), "lone high surrogate"},
		"entry not an object":        {`"x"`, "not an object"},
		"protected not a string":     {`{"protected":1,"signature":"` + s + `"}`, "no protected"},
	}
	v := New(Config{})
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := verifyString(t, v, withSignatures(minimalCard, "["+c.entry+"]"), VerifyOptions{Pinned: jwks})
			if got.Status != StatusInvalid || len(got.Signatures) != 1 || got.Signatures[0].Status != StatusInvalid {
				t.Fatalf("%+v", got)
			}
			if !strings.Contains(got.Signatures[0].Reason, c.reason) {
				t.Fatalf("reason %q lacks %q", got.Signatures[0].Reason, c.reason)
			}
		})
	}
	// The untouched signature verifies, so the cases above fail for their
	// own reason.
	if got := verifyString(t, v, withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Pinned: jwks}); got.Status != StatusVerified {
		t.Fatalf("control: %+v", got)
	}
}

// D.41: the key's type, curve and size must fit the header's alg.
func TestKeyAlgMismatchIsInvalid(t *testing.T) {
	p256 := mustKey(t, "P-256")
	p384 := mustKey(t, "P-384")
	ed := mustKey(t, "Ed25519")
	rk := mustKey(t, "RSA")
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, alg, header, jwks, reason string
		signer                          crypto.Signer
	}{
		{"ES256 header, P-384 key", "ES256", `{"alg":"ES256","kid":"k"}`, string(publicJWKS(t, p384, "k", "")), "needs EC P-256, key is EC P-384", p256},
		{"ES384 header, P-256 key", "ES384", `{"alg":"ES384","kid":"k"}`, string(publicJWKS(t, p256, "k", "")), "needs EC P-384, key is EC P-256", p384},
		{"EdDSA header, RSA key", "EdDSA", `{"alg":"EdDSA","kid":"k"}`, string(publicJWKS(t, rk, "k", "")), "needs Ed25519, key is RSA", ed},
		{"ES256 header, Ed25519 key", "ES256", `{"alg":"ES256","kid":"k"}`, string(publicJWKS(t, ed, "k", "")), "needs EC P-256, key is Ed25519", p256},
		{"RS256 with 1024-bit key", "RS256", `{"alg":"RS256","kid":"k"}`, string(publicJWKS(t, small, "k", "")), "1024 bits", small},
		{"PS256 header, key declared RS256", "RS256", `{"alg":"PS256","kid":"k"}`, string(publicJWKS(t, rk, "k", "RS256")), "is for RS256", rk},
		{"RS256 signature labelled PS256", "RS256", `{"alg":"PS256","kid":"k"}`, string(publicJWKS(t, rk, "k", "")), "no canonicalization profile", rk},
		{"RSA e=1", "RS256", `{"alg":"RS256","kid":"k"}`, `{"keys":[{"kty":"RSA","kid":"k","e":"AQ","n":"` + b64n(rk.(*rsa.PrivateKey)) + `"}]}`, "bad e value", rk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, s := signWith(t, minimalCard, c.signer, c.alg, c.header)
			got := verifyString(t, New(Config{}), withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Pinned: []byte(c.jwks)})
			if got.Status != StatusInvalid || !strings.Contains(got.Signatures[0].Reason, c.reason) {
				t.Fatalf("%+v", got)
			}
		})
	}
}

func b64n(k *rsa.PrivateKey) string { return base64.RawURLEncoding.EncodeToString(k.N.Bytes()) }
