package verifier

import (
	"encoding/json"
	"strings"
	"testing"
)

// a2a-tck CARD-SIGN-003: the protected header must decode to JSON with a
// non-empty alg and kid. Their signatures are fake, so verification ends
// `invalid` or `untrusted`, but the header verdict must match.
func TestTCKProtectedHeaderVectors(t *testing.T) {
	var f struct {
		Cases []struct {
			ID         string          `json:"id"`
			Card       json.RawMessage `json:"agent_card"`
			Valid      bool            `json:"expected_valid"`
			DecodedAlg string          `json:"decoded_alg"`
			DecodedKid string          `json:"decoded_kid"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(readFile(t, "testdata/signing/a2a-tck_tests_compatibility_agent_card_card_signing_protected_header_vectors.json"), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 6 {
		t.Fatalf("%d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		sigs := parseTree(t, c.Card).Get("signatures").Array
		for i, s := range sigs {
			h, err := parseProtected(s.Get("protected").String)
			if (err == nil) != c.Valid {
				t.Errorf("%s[%d]: err=%v, want valid=%v", c.ID, i, err, c.Valid)
			}
			if i == 0 && c.Valid && (h.alg != c.DecodedAlg || h.kid != c.DecodedKid) {
				t.Errorf("%s: decoded %s/%s", c.ID, h.alg, h.kid)
			}
		}
		v := New(Config{}).Verify(t.Context(), parseTree(t, c.Card), VerifyOptions{})
		if v.Status == StatusVerified || len(v.Signatures) != len(sigs) {
			t.Errorf("%s: %+v", c.ID, v)
		}
		if !c.Valid && v.Status != StatusInvalid {
			t.Errorf("%s: status %s", c.ID, v.Status)
		}
	}
}

// C.30: a case-variant key is a different member, covered by the spec
// profile's signature like any unknown member.
func TestC30CaseVariantKeysAreSigned(t *testing.T) {
	card := `{"name":"Good","NAME":"Evil","description":"d","skills":[]}`
	entry, jwks := signedEntry(t, card)
	if v := verifiesAs(t, card, entry, jwks); v.Status != StatusVerified || v.Profile != "spec" {
		t.Fatalf("%+v", v)
	}
	if v := verifiesAs(t, strings.Replace(card, "Evil", "Evil!", 1), entry, jwks); v.Status != StatusInvalid {
		t.Fatalf("%+v", v)
	}
}
