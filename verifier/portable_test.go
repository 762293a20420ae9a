package verifier

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func interopInputs(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var in map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, "testdata/signing/interop/interop_inputs.json"), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// refusedPointers are the pointers of a PortableError's lines.
func refusedPointers(err error) []string {
	var pe *PortableError
	if !errors.As(err, &pe) {
		return nil
	}
	var out []string
	for _, m := range pe.Members {
		out = append(out, m[:strings.Index(m, ":")])
	}
	return out
}

// The varied cards of the interop set: a portable signature either comes
// out with spec, spec-v1-only and sdk bytes equal (so a spec-literal
// verifier and the a2a-js verifier both accept it), or the card is refused
// naming the members that keep the forms apart.
func TestPreparePortable(t *testing.T) {
	in := interopInputs(t)
	refused := map[string][]string{
		"tck-cardsign-canon-003":    {"/url", "/securitySchemes/oauth/type"},
		"tck-cardsign-jcs-keyorder": nil, // every v0.3 scheme member, below
		"edge-v1":                   {"/capabilities/extensions/0/params", "/securityRequirements/0"},
		"hybrid-v1+v0.3":            nil, // checked below: every v0.3 member
	}
	k := mustKey(t, "P-256")
	jwks := publicJWKS(t, k, "k1", "ES256")
	for name, card := range in {
		t.Run(name, func(t *testing.T) {
			prepared, removed, err := PreparePortable(card)
			if want, ok := refused[name]; ok {
				if !errors.Is(err, ErrNotPortable) {
					t.Fatalf("not refused: %v (removed %v)", err, removed)
				}
				got := refusedPointers(err)
				if name == "hybrid-v1+v0.3" {
					for _, p := range []string{"/url", "/preferredTransport", "/protocolVersion"} {
						if !slices.Contains(got, p) {
							t.Fatalf("refused %v, want %s among them", got, p)
						}
					}
					return
				}
				if name == "tck-cardsign-jcs-keyorder" {
					want = []string{"/securitySchemes/😀/type", "/securitySchemes/😀/in", "/securitySchemes/😀/name",
						"/securitySchemes/דּ/type", "/securitySchemes/דּ/in", "/securitySchemes/דּ/name"}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("refused %v, want %v", got, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := Canonicalize(ProfileSpec, parseTree(t, prepared))
			for _, p := range []Profile{ProfileSpecV1Only, ProfileSDK} {
				if b, _ := Canonicalize(p, parseTree(t, prepared)); !bytes.Equal(b, spec) {
					t.Fatalf("%s bytes differ:\n%s\n%s", p, spec, b)
				}
			}
			signed, err := Sign(prepared, k, SignOptions{Kid: "k1"})
			if err != nil {
				t.Fatal(err)
			}
			if v := verifyString(t, New(Config{}), string(signed), VerifyOptions{Pinned: jwks}); v.Status != StatusVerified || v.Profile != string(ProfileSpec) {
				t.Fatalf("%+v", v)
			}
		})
	}
}

func TestPreparePortableRemovesDefaults(t *testing.T) {
	prepared, removed, err := PreparePortable(readFile(t, "testdata/signing/A2A_main_docs_specification.md_8.4.1-canonicalization-example-input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(prepared) != `{"name":"Example Agent","capabilities":{"streaming":false,"pushNotifications":false}}` {
		t.Fatalf("prepared %s", prepared)
	}
	want := []string{"/description: empty string", "/capabilities/extensions: empty list", "/skills: empty list"}
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %q", removed)
	}
}

func TestSignUnderAProfileAndDifferingProfiles(t *testing.T) {
	card := interopInputs(t)["edge-v1"]
	k := mustKey(t, "P-256")
	signed, err := Sign(card, k, SignOptions{Kid: "k1", Profile: ProfileSDK})
	if err != nil {
		t.Fatal(err)
	}
	v := verifyString(t, New(Config{}), string(signed), VerifyOptions{Pinned: publicJWKS(t, k, "k1", "ES256")})
	if v.Status != StatusVerified || v.Profile != string(ProfileSDK) {
		t.Fatalf("%+v", v)
	}
	diff, err := DifferingProfiles(ProfileSDK, card)
	if err != nil || !slices.Equal(diff, []Profile{ProfileSpec, ProfileSpecV1Only, ProfilePythonLegacy, ProfileRaw}) {
		t.Fatalf("differing %v %v", diff, err)
	}
	if _, err := ParseProfile("jcs"); !errors.Is(err, ErrUnknownProfile) {
		t.Fatal(err)
	}
}
