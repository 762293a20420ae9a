package verifier

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/agentcard"
)

// a2aJSFixture is testdata/signing/a2a-js/a2a-js-hybrid.json: hybrid cards
// signed by the a2a-js SDK 1.3.0 (ES256, EdDSA, RS256; without and with a
// bearer scheme, its v0.3 form spelled "Bearer" and "bearer"; with empty
// elements), each accepted by the SDK's own verifier when generated
// (generate.mjs), and the public keys.
type a2aJSFixture struct {
	JWKS  json.RawMessage            `json:"jwks"`
	Cards map[string]json.RawMessage `json:"cards"`
}

// Cards the a2a-js SDK signs and verifies are verified in Cardex: the v0.3
// members it does not sign are listed as not covered and ignored, the view
// is the signed members without the empty elements the SDK never signed,
// and the v0.3 form Cardex serves verifies too.
func TestA2AJSSignedHybridCardsVerify(t *testing.T) {
	var fx a2aJSFixture
	if err := json.Unmarshal(readFile(t, "testdata/signing/a2a-js/a2a-js-hybrid.json"), &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cards) != 12 {
		t.Fatalf("%d cards", len(fx.Cards))
	}
	v := New(Config{})
	opts := VerifyOptions{Pinned: fx.JWKS}
	for name, raw := range fx.Cards {
		t.Run(name, func(t *testing.T) {
			parsed, err := agentcard.Parse(raw, agentcard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			vd := v.Verify(t.Context(), parsed.Tree, opts)
			// Without empty values the sdk bytes are the spec-v1-only bytes,
			// which are tried first.
			profile := ProfileSpecV1Only
			if strings.HasSuffix(name, "-empty") {
				profile = ProfileSDK
			}
			if vd.Status != StatusVerified || vd.Profile != string(profile) || len(vd.Thumbprints) != 1 {
				t.Fatalf("verdict %+v", vd)
			}
			want := []string{"/url", "/preferredTransport", "/protocolVersion", "/additionalInterfaces"}
			if strings.Contains(name, "bearer") {
				want = append(want, "/securitySchemes/bearer/type", "/securitySchemes/bearer/scheme", "/securitySchemes/bearer/bearerFormat", "/security")
			}
			if !slices.Equal(vd.Uncovered, want) || !slices.Equal(vd.Signatures[0].Unsigned, want) {
				t.Fatalf("uncovered %q, want %q", vd.Uncovered, want)
			}
			// The v0.3 members name protocol version 0.3 for an interface
			// signed as 1.0: they disagree, and are ignored.
			if !vd.LegacyDisagrees {
				t.Fatal("the v0.3 members restate the signed ones")
			}
			view := View(Profile(vd.Profile), parsed, agentcard.Options{})
			if len(view.Interfaces) != 1 || view.Interfaces[0] != (agentcard.Interface{URL: "https://agent.example/a2a/jsonrpc", Binding: "JSONRPC", ProtocolVersion: "1.0"}) ||
				!slices.Equal(view.ProtocolVersions, []string{"1.0"}) || view.Shape != agentcard.ShapeHybrid {
				t.Fatalf("view interfaces %+v versions %q shape %s", view.Interfaces, view.ProtocolVersions, view.Shape)
			}
			if len(view.Skills) != 1 || !slices.Equal(view.Skills[0].Tags, []string{"echo"}) || !slices.Equal(view.DefaultInputModes, []string{"text/plain"}) {
				t.Fatalf("view skills %+v modes %q", view.Skills, view.DefaultInputModes)
			}
			if strings.Contains(name, "bearer") && (len(view.SecuritySchemes) != 1 || view.SecuritySchemes[0].Scheme != "Bearer") {
				t.Fatalf("view schemes %+v", view.SecuritySchemes)
			}
			legacy := LegacyRendering(Profile(vd.Profile), parsed.Tree, view)
			lv := verifyString(t, v, string(legacy), opts)
			if lv.Status != StatusVerified || lv.LegacyDisagrees || lv.Profile != string(profile) {
				t.Fatalf("the derived v0.3 form: %+v\n%s", lv, legacy)
			}
			if !strings.Contains(string(legacy), `"url":"https://agent.example/a2a/jsonrpc","preferredTransport":"JSONRPC","protocolVersion":"1.0"`) {
				t.Fatalf("derived v0.3 form %s", legacy)
			}
		})
	}
}
