package verifier

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// D.46: the unprotected header never changes the key or algorithm; what it
// tried is named in the reason.
func TestUnprotectedHeaderNeverSteers(t *testing.T) {
	k := mustKey(t, "P-256")
	p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k"}`)
	card := withSignatures(minimalCard, "["+sigEntry(p, s, `"header":{"kid":"other","jku":"https://evil.example/j","alg":"HS256","jwk":{"kty":"oct","k":"AA"}}`)+"]")
	got := verifyString(t, New(Config{}), card, VerifyOptions{Pinned: publicJWKS(t, k, "k", "")})
	sr := got.Signatures[0]
	if got.Status != StatusVerified || sr.Kid != "k" || sr.Alg != "ES256" ||
		!strings.Contains(sr.Reason, "unprotected header members ignored: alg, kid, jku, jwk") {
		t.Fatalf("%+v", got)
	}
	// A key named only in the unprotected header is not looked up.
	got = verifyString(t, New(Config{}), card, VerifyOptions{Pinned: publicJWKS(t, k, "other", "")})
	if got.Status != StatusError || !strings.Contains(got.Signatures[0].Reason, `no key "k" in pinned keys`) {
		t.Fatalf("%+v", got)
	}
}

// D.42: a key embedded in the header is never a trust root, even when the
// signature is mathematically valid under it.
func TestEmbeddedKeysAreNeverTrustRoots(t *testing.T) {
	k := mustKey(t, "P-256")
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: k.Public()})
	for _, member := range []string{`"jwk":` + string(jwk), `"x5u":"https://evil.example/c.pem"`, `"x5c":["MIIB"]`} {
		p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k",`+member+`}`)
		got := verifyString(t, New(Config{}), withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{})
		if got.Status == StatusVerified || got.Thumbprints == nil || len(got.Thumbprints) != 0 {
			t.Fatalf("%s: %+v", member, got)
		}
	}
	p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k","jwk":`+string(jwk)+`}`)
	got := verifyString(t, New(Config{}), withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{})
	if got.Status != StatusUntrusted || !strings.Contains(got.Signatures[0].Reason, "embedded jwk is never a trust root") {
		t.Fatalf("%+v", got)
	}
}

// Trusted sources over real HTTP on loopback: a jku on the origin is
// fetched; without jku the well-known set is used.
func TestSameOriginJKUAndWellKnown(t *testing.T) {
	host := newKeyHost(t)
	k := mustKey(t, "Ed25519")
	host.serve("/keys/jwks.json", publicJWKS(t, k, "jk", "EdDSA"))
	host.serve("/.well-known/jwks.json", publicJWKS(t, k, "wk", ""))
	v := loopbackVerifier(nil)

	p, s := signWith(t, minimalCard, k, "EdDSA", `{"alg":"EdDSA","kid":"jk","jku":"`+host.URL+`/keys/jwks.json"}`)
	got := verifyString(t, v, withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Origin: host.URL})
	if got.Status != StatusVerified || got.Signatures[0].KeySource != SourceJKU || host.count("/keys/jwks.json") != 1 {
		t.Fatalf("jku: %+v hits=%v", got, host.hits)
	}
	p, s = signWith(t, minimalCard, k, "EdDSA", `{"alg":"EdDSA","kid":"wk"}`)
	got = verifyString(t, v, withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Origin: host.URL + "/.well-known/agent-card.json"})
	if got.Status != StatusVerified || got.Signatures[0].KeySource != SourceWellKnown || host.count("/.well-known/jwks.json") != 1 {
		t.Fatalf("well-known: %+v hits=%v", got, host.hits)
	}
	// A jku on the origin that lacks the kid falls back to well-known.
	p, s = signWith(t, minimalCard, k, "EdDSA", `{"alg":"EdDSA","kid":"wk","jku":"`+host.URL+`/keys/jwks.json"}`)
	got = verifyString(t, v, withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Origin: host.URL})
	if got.Status != StatusVerified || got.Signatures[0].KeySource != SourceWellKnown {
		t.Fatalf("fallback: %+v", got)
	}
	// Cached: no further requests.
	if host.total() != 2 {
		t.Fatalf("requests %v", host.hits)
	}
}

// D.43, D.50: a jku off the origin is never fetched; a card replayed from
// another origin does not verify there.
func TestOffOriginJKUNeverFetched(t *testing.T) {
	victim, attacker := newKeyHost(t), newKeyHost(t)
	k := mustKey(t, "P-256")
	victim.serve("/jwks.json", publicJWKS(t, k, "k", ""))
	p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k","jku":"`+victim.URL+`/jwks.json"}`)
	card := withSignatures(minimalCard, "["+sigEntry(p, s)+"]")
	v := loopbackVerifier(nil)

	// The card as served by the victim verifies there.
	if got := verifyString(t, v, card, VerifyOptions{Origin: victim.URL}); got.Status != StatusVerified {
		t.Fatalf("victim: %+v", got)
	}
	victimHits := victim.total()
	// Replayed by the attacker: the victim's jku is off-origin and never
	// fetched; the attacker's own well-known set has no such key.
	attacker.serve("/.well-known/jwks.json", []byte(`{"keys":[]}`))
	got := verifyString(t, v, card, VerifyOptions{Origin: attacker.URL})
	if got.Status != StatusUntrusted || victim.total() != victimHits || !strings.Contains(got.Signatures[0].Reason, "not on the agent's origin") {
		t.Fatalf("replay: %+v victim hits %d→%d", got, victimHits, victim.total())
	}
	// No origin at all (a local file): untrusted, nothing fetched.
	got = verifyString(t, loopbackVerifier(nil), card, VerifyOptions{})
	if got.Status != StatusUntrusted || victim.total() != victimHits {
		t.Fatalf("no origin: %+v", got)
	}
	// Same host, other scheme or port: off-origin too.
	for _, jku := range []string{strings.Replace(victim.URL, "http://", "https://", 1) + "/jwks.json", "http://127.0.0.1:1/jwks.json", "http://localhost" + victim.URL[len("http://127.0.0.1"):] + "/jwks.json"} {
		p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k","jku":"`+jku+`"}`)
		got := verifyString(t, loopbackVerifier(nil), withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Origin: victim.URL})
		if got.Status == StatusVerified || got.Signatures[0].KeySource == SourceJKU {
			t.Fatalf("%s: %+v", jku, got)
		}
	}
}

// D.44: hostile key sets on the right host make signatures `error`.
func TestHostileKeySets(t *testing.T) {
	k := mustKey(t, "P-256")
	pub := publicJWKS(t, k, "k", "")
	var keys strings.Builder
	keys.WriteString(`{"keys":[`)
	for i := range 10000 {
		if i > 0 {
			keys.WriteString(",")
		}
		fmt.Fprintf(&keys, `{"kty":"EC","crv":"P-256","kid":"k%d","x":"1hfDiSfHbSrkd1mNNsae0-VRzdYa-D4y8Qwm9AkzgfI","y":"MxEwfcYmwYGhGStraOJvSxuNnjHz3vfhsQhlnQtPBoQ"}`, i)
	}
	keys.WriteString(`]}`)
	var jwkPriv map[string]any
	json.Unmarshal(readJWKPrivate(t), &jwkPriv)
	jwkPriv["kid"] = "k"
	privSet, _ := json.Marshal(map[string]any{"keys": []any{jwkPriv}})
	dup := strings.Replace(string(pub), `{"keys":[`, `{"keys":[`+strings.TrimSuffix(strings.TrimPrefix(string(pub), `{"keys":[`), "]}")+",", 1)
	cases := map[string]struct {
		handler http.HandlerFunc
		reason  string
	}{
		"50 MB set": {func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"keys":[`))
			chunk := []byte(strings.Repeat(" ", 1<<20))
			for range 50 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "larger than 64 KiB"},
		"10,000 keys":        {body(keys.String()), "larger than 64 KiB"},
		"101 keys":           {body(manyKeys(101)), "more than 100 keys"},
		"private key":        {body(string(privSet)), "private key material"},
		"oct key":            {body(`{"keys":[{"kty":"oct","kid":"k","k":"c2VjcmV0"}]}`), "private key material"},
		"oct without k":      {body(`{"keys":[{"kty":"oct","kid":"k"}]}`), "symmetric key"},
		"duplicate kid":      {body(dup), "duplicate kid"},
		"kid-to-PEM map":     {body(`{"k":"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----"}`), `no "keys" array`},
		"keys not an array":  {body(`{"keys":{"k":1}}`), `no "keys" array`},
		"not JSON":           {body(`<html>`), "not a JWKS"},
		"duplicate JSON key": {body(`{"keys":[],"keys":[]}`), "duplicate key"},
		"redirect": {func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere.json", http.StatusFound)
		}, "redirected"},
		"status 500": {func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, "non-200 status: 500"},
		"slow server": {func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "fetch failed"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			host := newKeyHost(t)
			host.handle("/.well-known/jwks.json", c.handler)
			host.serve("/elsewhere.json", pub)
			p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k"}`)
			start := time.Now()
			got := verifyString(t, loopbackVerifier(nil), withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Origin: host.URL})
			if got.Status != StatusError || !strings.Contains(got.Signatures[0].Reason, c.reason) {
				t.Fatalf("%+v", got)
			}
			if host.count("/elsewhere.json") != 0 {
				t.Fatal("redirect followed")
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v, want bounded by the 500 ms fetch timeout", d)
			}
		})
	}
}

func body(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(s)) }
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString(`{"keys":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"kty":"OKP","crv":"Ed25519","kid":"%d","x":"HPZl5kjLaWKcAp5QBiOWueZa0MyB5U6CGj0M6xZN4W4"}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// D.51: at most 8 signatures examined and at most 2 key set URLs fetched per
// card, however many distinct jku values the signatures name.
func TestManySignaturesAreCapped(t *testing.T) {
	host := newKeyHost(t)
	k := mustKey(t, "Ed25519")
	var entries []string
	for i := range 50 {
		host.serve(fmt.Sprintf("/j%d.json", i), publicJWKS(t, k, "other", ""))
		p, s := signWith(t, minimalCard, k, "EdDSA", fmt.Sprintf(`{"alg":"EdDSA","kid":"k","jku":"%s/j%d.json"}`, host.URL, i))
		entries = append(entries, sigEntry(p, s))
	}
	for len(entries) < 1000 {
		entries = append(entries, entries[len(entries)%50])
	}
	got := verifyString(t, loopbackVerifier(nil), withSignatures(minimalCard, "["+strings.Join(entries, ",")+"]"), VerifyOptions{Origin: host.URL})
	if len(got.Signatures) != 1000 || host.total() != 2 {
		t.Fatalf("results %d, requests %d (%v)", len(got.Signatures), host.total(), host.hits)
	}
	for i, r := range got.Signatures {
		want := StatusError
		if i >= 8 && (r.Status != StatusInvalid || !strings.Contains(r.Reason, "not examined")) {
			t.Fatalf("signature %d: %+v", i, r)
		}
		if i < 8 && r.Status != want {
			t.Fatalf("signature %d: %+v", i, r)
		}
		if i >= 2 && i < 8 && !strings.Contains(r.Reason, "at most 2 key set URLs") {
			t.Fatalf("signature %d: %+v", i, r)
		}
	}
}

// C.28, E.60 at card level.
func TestCardShapes(t *testing.T) {
	v := New(Config{})
	for raw, want := range map[string]string{
		`{"name":"x"}`:                     StatusUnsigned,
		`{"name":"x","signatures":[]}`:     StatusUnsigned,
		`{"name":"x","signatures":{}}`:     StatusInvalid,
		`{"name":"x","signatures":"eyJ"}`:  StatusInvalid,
		`{"name":"x","signatures":[null]}`: StatusInvalid,
		`[]`:                               StatusInvalid,
	} {
		got := verifyString(t, v, raw, VerifyOptions{})
		if got.Status != want || got.Signatures == nil || got.Thumbprints == nil {
			t.Errorf("%s: %+v", raw, got)
		}
	}
}

// The verdict's JSON shape is exactly the one of docs/verification.md.
func TestVerdictJSONShape(t *testing.T) {
	k := mustKey(t, "Ed25519")
	p, s := signWith(t, minimalCard, k, "EdDSA", `{"alg":"EdDSA","kid":"k"}`)
	got := verifyString(t, New(Config{}), withSignatures(minimalCard, "["+sigEntry(p, s)+"]"), VerifyOptions{Pinned: publicJWKS(t, k, "k", "")})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	tp := thumbprintOf(t, k.Public())
	want := `{"status":"verified","profile":"spec","signatures":[{"index":0,"kid":"k","alg":"EdDSA","keySource":"pinned","profile":"spec","status":"verified","reason":"verified with key \"k\" from pinned keys under profile spec","thumbprint":"` + tp + `"}],"thumbprints":["` + tp + `"]}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(verifyString(t, New(Config{}), minimalCard, VerifyOptions{}))
	if string(b) != `{"status":"unsigned","profile":"","signatures":[],"thumbprints":[]}` {
		t.Fatalf("unsigned: %s", b)
	}
}
