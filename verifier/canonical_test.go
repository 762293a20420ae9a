package verifier

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseTree(t testing.TB, raw []byte) *strictjson.Value {
	t.Helper()
	v, err := strictjson.Parse(raw)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return v
}

func canon(t testing.TB, p Profile, raw []byte) string {
	t.Helper()
	out, err := Canonicalize(p, parseTree(t, raw))
	if err != nil {
		t.Fatalf("Canonicalize(%s): %v", p, err)
	}
	return string(out)
}

// The cyberphone RFC 8785 vectors, byte for byte, through the same path the
// verifier uses: strict parse → strictjson.Marshal → JCS (E.54, E.58).
func TestJCSVectors(t *testing.T) {
	names, err := filepath.Glob("testdata/jcs/input/*.json")
	if err != nil || len(names) != 6 {
		t.Fatalf("want 6 JCS vectors, got %d (%v)", len(names), err)
	}
	for _, in := range names {
		t.Run(filepath.Base(in), func(t *testing.T) {
			want := readFile(t, strings.Replace(in, "input", "output", 1))
			got, err := jcsBytes(parseTree(t, readFile(t, in)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestSpecWorkedExample(t *testing.T) {
	raw := readFile(t, "testdata/signing/A2A_main_docs_specification.md_8.4.1-canonicalization-example-input.json")
	const want = `{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}`
	if got := canon(t, ProfileSpec, raw); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

type tckVectors struct {
	PublicJWK json.RawMessage `json:"public_jwk"`
	Canon     []struct {
		ID       string          `json:"id"`
		Card     json.RawMessage `json:"agent_card"`
		Expected string          `json:"expected_jcs_payload"`
	} `json:"canonicalization_cases"`
	Signing []struct {
		ID        string          `json:"id"`
		Card      json.RawMessage `json:"agent_card"`
		Expected  string          `json:"expected_jcs_payload"`
		Protected string          `json:"expected_protected_b64"`
		Signature string          `json:"signature"`
	} `json:"signing_cases"`
}

func loadTCK(t testing.TB) tckVectors {
	var v tckVectors
	if err := json.Unmarshal(readFile(t, "testdata/signing/a2a-tck_tests_unit_agent_card_card_signing_vectors.json"), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The a2a-tck CARD-SIGN canonicalization cases under the spec profile.
func TestTCKCanonicalizationCases(t *testing.T) {
	v := loadTCK(t)
	if len(v.Canon) != 6 || len(v.Signing) != 2 {
		t.Fatalf("unexpected vector counts %d/%d", len(v.Canon), len(v.Signing))
	}
	for _, c := range v.Canon {
		if got := canon(t, ProfileSpec, c.Card); got != c.Expected {
			t.Errorf("%s:\ngot  %s\nwant %s", c.ID, got, c.Expected)
		}
	}
	for _, c := range v.Signing {
		if got := canon(t, ProfileSpec, c.Card); got != c.Expected {
			t.Errorf("%s:\ngot  %s\nwant %s", c.ID, got, c.Expected)
		}
	}
}

func TestCanonicalizeRejectsNonObjects(t *testing.T) {
	for _, raw := range []string{`[]`, `"x"`, `null`, `1`} {
		if _, err := Canonicalize(ProfileSpec, parseTree(t, []byte(raw))); err != ErrNotObject {
			t.Errorf("%s: err=%v, want ErrNotObject", raw, err)
		}
	}
	if _, err := Canonicalize(Profile("nope"), parseTree(t, []byte(`{}`))); err == nil {
		t.Error("unknown profile accepted")
	}
}

// Presence rules beyond the vectors: REQUIRED kept even when default,
// optional kept when set, plain defaults dropped, messages kept when set,
// unknown members kept (spec) or dropped (spec-v1-only), Struct verbatim.
func TestPresenceRules(t *testing.T) {
	raw := []byte(`{"name":"","description":"","version":"","supportedInterfaces":[],"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
		"capabilities":{},"provider":{},"documentationUrl":"","iconUrl":"","securitySchemes":{},"securityRequirements":[],
		"x-vendor":{"a":""},"protocolVersion":"0.3.0",
		"skills2":null}`)
	want := `{"capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"","documentationUrl":"","iconUrl":"","name":"","protocolVersion":"0.3.0","provider":{},"skills":[],"skills2":null,"supportedInterfaces":[],"version":"","x-vendor":{"a":""}}`
	if got := canon(t, ProfileSpec, raw); got != want {
		t.Errorf("spec:\ngot  %s\nwant %s", got, want)
	}
	want = `{"capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"","documentationUrl":"","iconUrl":"","name":"","provider":{},"skills":[],"supportedInterfaces":[],"version":""}`
	if got := canon(t, ProfileSpecV1Only, raw); got != want {
		t.Errorf("spec-v1-only:\ngot  %s\nwant %s", got, want)
	}
	if got := canon(t, ProfileSDK, raw); got != `{}` {
		t.Errorf("sdk: got %s, want {}", got)
	}
	nested := []byte(`{"name":"n","capabilities":{"streaming":false,"extensions":[{"uri":"","required":false,"description":"","params":{"a":"","b":[],"c":null,"d":0}}]},
		"skills":[{"id":"s","name":"","description":"","tags":[],"examples":[],"inputModes":[],"securityRequirements":[{"schemes":{"x":{"list":[]}}}],"zz":1}],
		"securitySchemes":{"o":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"","refreshUrl":"","scopes":{}}},"description":""}}},
		"supportedInterfaces":[{"url":"u","protocolBinding":"","tenant":"","protocolVersion":""}]}`)
	want = `{"capabilities":{"extensions":[{"params":{"a":"","b":[],"c":null,"d":0}}],"streaming":false},"name":"n","securitySchemes":{"o":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"scopes":{},"tokenUrl":""}}}}},"skills":[{"description":"","id":"s","name":"","securityRequirements":[{"schemes":{"x":{}}}],"tags":[],"zz":1}],"supportedInterfaces":[{"protocolBinding":"","protocolVersion":"","url":"u"}]}`
	if got := canon(t, ProfileSpec, nested); got != want {
		t.Errorf("nested spec:\ngot  %s\nwant %s", got, want)
	}
	want = `{"capabilities":{"extensions":[{"params":{"d":0}}],"streaming":false},"name":"n","skills":[{"id":"s"}],"supportedInterfaces":[{"url":"u"}]}`
	if got := canon(t, ProfileSDK, nested); got != want {
		t.Errorf("nested sdk:\ngot  %s\nwant %s", got, want)
	}
}

// A wrong JSON type in a known member is canonicalized as received, never
// coerced and never a panic.
func TestWrongTypesKeptVerbatim(t *testing.T) {
	raw := []byte(`{"name":5,"skills":"x","capabilities":[1],"securitySchemes":[],"supportedInterfaces":{"a":1},"provider":"p"}`)
	want := `{"capabilities":[1],"name":5,"provider":"p","securitySchemes":[],"skills":"x","supportedInterfaces":{"a":1}}`
	for _, p := range []Profile{ProfileSpec, ProfileSpecV1Only} {
		if got := canon(t, p, raw); got != want {
			t.Errorf("%s:\ngot  %s\nwant %s", p, got, want)
		}
	}
	// The sdk profile still removes the empty array.
	want = `{"capabilities":[1],"name":5,"provider":"p","skills":"x","supportedInterfaces":{"a":1}}`
	if got := canon(t, ProfileSDK, raw); got != want {
		t.Errorf("sdk:\ngot  %s\nwant %s", got, want)
	}
}
