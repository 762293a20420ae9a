package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cardexhq/cardex/verifier"
	"github.com/go-jose/go-jose/v4"
)

const cliCard = `{"name":"CLI Agent","description":"Signs and verifies","version":"1.0.0",
  "supportedInterfaces":[{"url":"https://cli.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
  "capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
  "skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// newSigningKey writes a PKCS#8 P-256 key and returns its path, the public
// JWKS (kid = RFC 7638 thumbprint, the `sign` default) and the kid.
func newSigningKey(t *testing.T) (keyPath string, jwks []byte, kid string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	keyPath = writeFile(t, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	jwk := jose.JSONWebKey{Key: k.Public()}
	tp, _ := jwk.Thumbprint(cryptoSHA256)
	kid = b64url(tp)
	jwk.KeyID = kid
	jwks, _ = json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
	return keyPath, jwks, kid
}

// `cardex verify --jwks` verifies what `cardex sign` makes.
func TestSignThenVerify(t *testing.T) {
	keyPath, jwks, kid := newSigningKey(t)
	code, signed, errs := runCLI(t, "", "sign", "--key", keyPath, writeFile(t, "card.json", cliCard))
	if code != exitOK || errs != "" {
		t.Fatalf("sign: code=%d stderr=%q", code, errs)
	}
	cardPath := writeFile(t, "signed.json", signed)
	jwksPath := writeFile(t, "jwks.json", string(jwks))

	code, out, errs := runCLI(t, "", "verify", "--jwks", jwksPath, cardPath)
	if code != exitOK || errs != "" {
		t.Fatalf("verify: code=%d stdout=%q stderr=%q", code, out, errs)
	}
	for _, want := range []string{"signature 0: verified", `kid:        "` + kid + `"`, "alg:        ES256", "key source: pinned", "profile:    spec", "card: verified (profile spec)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "", "verify", cardPath, "--json", "--jwks", jwksPath)
	var v verifier.Verdict
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v.Status != "verified" || v.Profile != "spec" ||
		len(v.Signatures) != 1 || v.Signatures[0].Kid != kid || v.Signatures[0].KeySource != "pinned" || len(v.Thumbprints) != 1 || v.Thumbprints[0] != kid {
		t.Fatalf("--json: code=%d %s", code, out)
	}
	var shape map[string]json.RawMessage
	json.Unmarshal([]byte(out), &shape)
	if len(shape) != 4 || shape["status"] == nil || shape["profile"] == nil || shape["signatures"] == nil || shape["thumbprints"] == nil {
		t.Fatalf("verdict keys: %s", out)
	}

	// Tampered: exit 1.
	tampered := writeFile(t, "tampered.json", strings.Replace(signed, "Signs and verifies", "Signs and verifies!", 1))
	if code, out, _ := runCLI(t, "", "verify", "--jwks", jwksPath, tampered); code != exitFail || !strings.Contains(out, "card: invalid") {
		t.Fatalf("tampered: code=%d %s", code, out)
	}
	// No trusted source for a local file without --jwks: exit 1, untrusted.
	if code, out, _ := runCLI(t, "", "verify", cardPath); code != exitFail || !strings.Contains(out, "card: untrusted") {
		t.Fatalf("no keys: code=%d %s", code, out)
	}
	// Stdin.
	if code, _, _ := runCLI(t, signed, "verify", "--jwks", jwksPath, "-"); code != exitOK {
		t.Fatalf("stdin: code=%d", code)
	}
}

func TestVerifyExitCodes(t *testing.T) {
	_, jwks, _ := newSigningKey(t)
	jwksPath := writeFile(t, "jwks.json", string(jwks))
	cases := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"unsigned", []string{"verify", writeFile(t, "u.json", cliCard)}, exitFail, ""},
		{"not JSON", []string{"verify", writeFile(t, "n.json", "{nope")}, exitUsage, "not valid JSON"},
		{"array", []string{"verify", writeFile(t, "a.json", "[1]")}, exitUsage, "not an agent card object"},
		{"duplicate key C.29", []string{"verify", writeFile(t, "d.json", `{"name":"a","name":"b"}`)}, exitUsage, "duplicate key"},
		{"missing file", []string{"verify", filepath.Join(t.TempDir(), "none.json")}, exitUsage, "no such file"},
		{"no argument", []string{"verify"}, exitUsage, "exactly one card"},
		{"two arguments", []string{"verify", "a.json", "b.json"}, exitUsage, "exactly one card"},
		{"bad flag", []string{"verify", "--frobnicate", "a.json"}, exitUsage, "flag provided but not defined"},
		{"bad jwks", []string{"verify", "--jwks", writeFile(t, "j.json", `{"k":"PEM"}`), writeFile(t, "c.json", cliCard)}, exitUsage, "not a JWKS"},
		{"private jwks", []string{"verify", "--jwks", writeFile(t, "p.json", `{"keys":[{"kty":"oct","k":"AA"}]}`), writeFile(t, "c.json", cliCard)}, exitUsage, "private key material"},
		{"bad origin", []string{"verify", "--origin", "ftp://x", "--jwks", jwksPath, writeFile(t, "c.json", cliCard)}, exitUsage, "--origin"},
		{"http origin needs allowance", []string{"verify", "--origin", "http://127.0.0.1:1", writeFile(t, "c.json", cliCard)}, exitUsage, "--allow-insecure-http"},
		{"URL to a reserved address B.11", []string{"verify", "https://127.0.0.1:1/.well-known/agent-card.json"}, exitUsage, "blocked_address"},
		{"bad timeout", []string{"verify", "--timeout", "0s", "https://agent.example.com/"}, exitUsage, "--timeout must be positive"},
		{"help", []string{"verify", "-h"}, exitOK, "Usage: cardex verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "", c.args...)
			if code != c.code || !strings.Contains(errs, c.err) {
				t.Fatalf("code=%d stderr=%q", code, errs)
			}
		})
	}
}

// The shipped signed cards through the CLI: TCK EdDSA (spec), a2a-js ES256
// (sdk), a2a-go PR #368 (not verified).
func TestVerifyTestdataCards(t *testing.T) {
	td := "../../verifier/testdata/"
	var tck struct {
		PublicJWK json.RawMessage `json:"public_jwk"`
	}
	raw, _ := os.ReadFile(td + "signing/a2a-tck_tests_unit_agent_card_card_signing_vectors.json")
	json.Unmarshal(raw, &tck)
	tckJWKS := writeFile(t, "tck.json", `{"keys":[`+string(tck.PublicJWK)+`]}`)
	var es struct {
		JWKS json.RawMessage `json:"jwks"`
	}
	raw, _ = os.ReadFile(td + "signing/generated_test_key_es256.json")
	json.Unmarshal(raw, &es)
	esJWKS := writeFile(t, "es.json", string(es.JWKS))
	cases := []struct {
		card, jwks string
		code       int
		want       string
	}{
		{"a2a-tck_tests_unit_agent_card_card_signing_vectors.json_cardsign-sign-001_SIGNED-EdDSA.json", tckJWKS, exitOK, "card: verified (profile spec)"},
		{"GENERATED_a2a-js-1.3.0_generateAgentCardSignature_edge-v1_SIGNED-ES256.json", esJWKS, exitOK, "card: verified (profile sdk)"},
		{"GENERATED_a2a-go-pr368_a2acrypto.Sign_edge-v1-goform_SIGNED-ES256.json", esJWKS, exitFail, "no canonicalization profile"},
		{"wild_0xYuvi_NarrativeOS_.well-known_agent-card.json_SIGNED-EdDSA.json", tckJWKS, exitFail, "protected header has no kid"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, "", "verify", "--jwks", c.jwks, td+"cards/"+c.card)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: code=%d stderr=%q\n%s", c.card, code, errs, out)
		}
		// The TCK vector lists no endpoint: its signature verifies, and
		// verify says it is no listable agent card (docs/lint.md).
		wantLint := strings.HasPrefix(c.card, "a2a-tck")
		if got := strings.Contains(errs, "cardex verify: lint error no-endpoint /supportedInterfaces: "); got != wantLint {
			t.Errorf("%s: stderr=%q, want lint error: %v", c.card, errs, wantLint)
		}
	}
}

// A card URL goes through the injected fetcher; its origin's well-known key
// set is fetched over loopback.
func TestVerifyURLWithInjectedFetcher(t *testing.T) {
	keyPath, jwks, _ := newSigningKey(t)
	code, signed, _ := runCLI(t, "", "sign", "--key", keyPath, writeFile(t, "card.json", cliCard))
	if code != exitOK {
		t.Fatal("sign failed")
	}
	var jwksHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/jwks.json" {
			jwksHits.Add(1)
			w.Write(jwks)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	cardURL := srv.URL + "/.well-known/agent-card.json"
	var fetched []string
	cmd := &verifyCmd{cards: func(_ context.Context, url string) ([]byte, error) {
		fetched = append(fetched, url)
		if url != cardURL {
			return nil, errors.New("unexpected URL")
		}
		return []byte(signed), nil
	}}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	// An http card URL needs the allowance; nothing is fetched without it.
	if code := cmd.run(t.Context(), e, []string{cardURL}); code != exitUsage || len(fetched) != 0 || !strings.Contains(errb.String(), "--allow-insecure-http") {
		t.Fatalf("without allowance: code=%d fetched=%v stderr=%s", code, fetched, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = cmd.run(t.Context(), e, []string{"--allow-insecure-http", "--allow-networks", "127.0.0.0/8", cardURL})
	if code != exitOK || len(fetched) != 1 || jwksHits.Load() != 1 || !strings.Contains(out.String(), "key source: well-known") {
		t.Fatalf("code=%d fetched=%v hits=%d stdout=%s stderr=%s", code, fetched, jwksHits.Load(), out.String(), errb.String())
	}
	// The same card as a local file with --origin naming the agent.
	code, outS, errS := runCLI(t, "", "verify", "--allow-insecure-http", "--allow-networks", "127.0.0.0/8", "--origin", srv.URL, writeFile(t, "signed.json", signed))
	if code != exitOK || jwksHits.Load() != 2 || !strings.Contains(outS, "key source: well-known") {
		t.Fatalf("--origin: code=%d %s %s", code, outS, errS)
	}
}

// Without injected fetchers, `cardex verify URL` fetches the card and its
// key set through the crawler's hardened fetcher: under the production
// policy a loopback agent is never contacted (B.11); with the allowances of
// docs/security.md "Network policy" the card verifies against its own origin's key set.
func TestVerifyURLThroughTheHardenedFetcher(t *testing.T) {
	keyPath, jwks, _ := newSigningKey(t)
	code, signed, _ := runCLI(t, "", "sign", "--key", keyPath, writeFile(t, "card.json", cliCard))
	if code != exitOK {
		t.Fatal("sign failed")
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/jwks.json":
			w.Write(jwks)
		case "/.well-known/agent-card.json":
			io.WriteString(w, signed)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cardURL := srv.URL + "/.well-known/agent-card.json"

	code, _, errs := runCLI(t, "", "verify", "--allow-insecure-http", cardURL)
	if code != exitUsage || hits.Load() != 0 || !strings.Contains(errs, "blocked_address") {
		t.Fatalf("production policy: code=%d hits=%d stderr=%q", code, hits.Load(), errs)
	}
	code, out, errs := runCLI(t, "", "verify", "--json", "--allow-insecure-http", "--allow-networks", "127.0.0.0/8", cardURL)
	if code != exitOK || hits.Load() != 2 || !strings.Contains(out, `"status":"verified"`) || !strings.Contains(out, `"keySource":"well-known"`) {
		t.Fatalf("allowed: code=%d hits=%d stdout=%s stderr=%s", code, hits.Load(), out, errs)
	}
}

// hybridCLICard is a hybrid card whose v0.3 members say something its v1
// members do not (another protocol version for the URL): the forms that
// sign only the v1 members leave them out, and Cardex ignores them.
const hybridCLICard = `{"name":"Hybrid Agent","description":"Signs and verifies","version":"1.0.0",
  "supportedInterfaces":[{"url":"https://cli.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
  "url":"https://cli.example/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",
  "capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
  "skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

// Cardex accepts what Cardex signs: every --profile `cardex sign` offers
// round-trips through `cardex verify` as verified (the default, portable,
// refuses a hybrid card; TestSignThenVerify covers it).
func TestSignThenVerifyEveryProfile(t *testing.T) {
	keyPath, jwks, _ := newSigningKey(t)
	jwksPath := writeFile(t, "jwks.json", string(jwks))
	cardPath := writeFile(t, "hybrid.json", hybridCLICard)
	var profiles []string
	for _, p := range verifier.Profiles {
		profiles = append(profiles, string(p))
	}
	for _, p := range profiles {
		t.Run(p, func(t *testing.T) {
			code, signed, errs := runCLI(t, "", "sign", "--key", keyPath, "--profile", p, cardPath)
			if code != exitOK {
				t.Fatalf("sign: code=%d stderr=%q", code, errs)
			}
			code, out, errs := runCLI(t, "", "verify", "--json", "--jwks", jwksPath, writeFile(t, "signed.json", signed))
			var v verifier.Verdict
			if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || v.Status != verifier.StatusVerified {
				t.Fatalf("verify: code=%d stdout=%s stderr=%q", code, out, errs)
			}
			// The partial forms leave the v0.3 members uncovered, and say so.
			switch verifier.Profile(v.Profile) {
			case verifier.ProfileSpecV1Only, verifier.ProfileSDK, verifier.ProfilePythonLegacy:
				if want := []string{"/url", "/preferredTransport", "/protocolVersion"}; !slices.Equal(v.Uncovered, want) {
					t.Fatalf("uncovered %q, want %q", v.Uncovered, want)
				}
			default:
				if len(v.Uncovered) != 0 {
					t.Fatalf("uncovered %q under %s", v.Uncovered, v.Profile)
				}
			}
		})
	}
}
