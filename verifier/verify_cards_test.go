package verifier

import (
	"encoding/json"
	"strings"
	"testing"
)

// jwksOf wraps one JWK in a JWKS.
func jwksOf(t testing.TB, jwk []byte) []byte {
	t.Helper()
	return []byte(`{"keys":[` + string(jwk) + `]}`)
}

func tckJWKS(t testing.TB) []byte { return jwksOf(t, loadTCK(t).PublicJWK) }

func es256JWKS(t testing.TB) []byte {
	var k struct {
		JWKS json.RawMessage `json:"jwks"`
	}
	if err := json.Unmarshal(readFile(t, "testdata/signing/generated_test_key_es256.json"), &k); err != nil {
		t.Fatal(err)
	}
	return k.JWKS
}

func verifyFile(t *testing.T, path string, opts VerifyOptions) Verdict {
	t.Helper()
	return New(Config{}).Verify(t.Context(), parseTree(t, readFile(t, path)), opts)
}

func TestTCKSignedCardsVerifyUnderSpec(t *testing.T) {
	for _, name := range []string{"cardsign-sign-001", "cardsign-sign-002"} {
		v := verifyFile(t, "testdata/cards/a2a-tck_tests_unit_agent_card_card_signing_vectors.json_"+name+"_SIGNED-EdDSA.json", VerifyOptions{Pinned: tckJWKS(t)})
		if v.Status != StatusVerified || v.Profile != "spec" || len(v.Signatures) != 1 {
			t.Fatalf("%s: %+v", name, v)
		}
		s := v.Signatures[0]
		if s.Kid != "key-1" || s.Alg != "EdDSA" || s.KeySource != SourcePinned || s.Profile != "spec" || s.Status != StatusVerified {
			t.Fatalf("%s: %+v", name, s)
		}
		if len(v.Thumbprints) != 1 || v.Thumbprints[0] != s.Thumbprint || len(s.Thumbprint) != 43 {
			t.Fatalf("%s: thumbprints %v / %q", name, v.Thumbprints, s.Thumbprint)
		}
	}
}

func TestJSSignedCardsVerifyUnderSDK(t *testing.T) {
	for _, name := range []string{"edge-v1", "spec-8.5-sample-v1"} {
		v := verifyFile(t, "testdata/cards/GENERATED_a2a-js-1.3.0_generateAgentCardSignature_"+name+"_SIGNED-ES256.json", VerifyOptions{Pinned: es256JWKS(t)})
		if v.Status != StatusVerified || len(v.Signatures) != 1 {
			t.Fatalf("%s: %+v", name, v)
		}
		s := v.Signatures[0]
		// The spec sample has no empty values, so its sdk bytes equal the
		// spec bytes and the spec profile, tried first, already verifies.
		want := "sdk"
		if name == "spec-8.5-sample-v1" {
			want = "spec"
		}
		if s.Profile != want || s.Kid != "research-es256-1" || s.Alg != "ES256" || s.KeySource != SourcePinned {
			t.Fatalf("%s: %+v", name, s)
		}
	}
}

// The a2a-go PR #368 writer is not RFC 8785 (1e-06, dropped false): its
// edge card verifies under no profile. Its spec §8.5 card is the exception
// the interop files predict (canon_gopr368_goform.json equals every profile
// there): the card holds no value the Go writer spells differently, the
// served bytes are the signed bytes, and the signature is genuinely valid
// under the spec profile. Refusing it would mean rejecting a correct
// signature, so it is pinned as verified.
func TestGoPR368SpecSampleVerifies(t *testing.T) {
	v := verifyFile(t, "testdata/cards/GENERATED_a2a-go-pr368_a2acrypto.Sign_spec-8.5-sample-v1-goform_SIGNED-ES256.json", VerifyOptions{Pinned: es256JWKS(t)})
	if v.Status != StatusVerified || v.Profile != "spec" {
		t.Fatalf("%+v", v)
	}
	// Its jku names georoute-agent.example.com; without pinned keys and on
	// another origin that is never a trust root.
	v = verifyFile(t, "testdata/cards/GENERATED_a2a-go-pr368_a2acrypto.Sign_spec-8.5-sample-v1-goform_SIGNED-ES256.json", VerifyOptions{Origin: "https://other.example"})
	if v.Status == StatusVerified {
		t.Fatalf("%+v", v)
	}
}

func TestGoPR368EdgeCardIsNotVerified(t *testing.T) {
	v := verifyFile(t, "testdata/cards/GENERATED_a2a-go-pr368_a2acrypto.Sign_edge-v1-goform_SIGNED-ES256.json", VerifyOptions{Pinned: es256JWKS(t)})
	if v.Status != StatusInvalid || v.Signatures[0].Status != StatusInvalid || v.Signatures[0].KeySource != SourcePinned ||
		!strings.Contains(v.Signatures[0].Reason, "no canonicalization profile") {
		t.Fatalf("%+v", v)
	}
}

func TestWildNarrativeOSIsNeverVerified(t *testing.T) {
	for _, opts := range []VerifyOptions{{}, {Pinned: tckJWKS(t)}} {
		v := verifyFile(t, "testdata/cards/wild_0xYuvi_NarrativeOS_.well-known_agent-card.json_SIGNED-EdDSA.json", opts)
		if v.Status == StatusVerified || v.Signatures[0].Status != StatusInvalid {
			t.Fatalf("%+v", v)
		}
		r := v.Signatures[0].Reason
		if !strings.Contains(r, "no kid") || !strings.Contains(r, "unprotected header members ignored: kid") {
			t.Fatalf("reason %q", r)
		}
	}
}
