package agentcard

import (
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	sj "github.com/cardexhq/cardex/strictjson"
)

// v1Members are the top-level members of the v1 AgentCard: what the
// spec-v1-only projection keeps at the top level.
var v1Members = []string{"name", "description", "supportedInterfaces", "provider", "version", "documentationUrl",
	"capabilities", "securitySchemes", "securityRequirements", "defaultInputModes", "defaultOutputModes", "skills", "iconUrl"}

// topLevelOnly returns tree with only the named top-level members.
func topLevelOnly(tree *sj.Value, keep []string) *sj.Value {
	out := &sj.Value{Kind: sj.Object}
	for _, m := range tree.Object {
		if slices.Contains(keep, m.Key) {
			out.Object = append(out.Object, m)
		}
	}
	return out
}

func mustTree(t *testing.T, s string) *sj.Value {
	t.Helper()
	v, err := sj.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCoverageOfTheSDKHybrid(t *testing.T) {
	raw, err := os.ReadFile("testdata/cards/a2a-python_tests_server_request_handlers_test_response_helpers.py_expected-hybrid-v1+v0.3.json")
	if err != nil {
		t.Fatal(err)
	}
	full := mustTree(t, string(raw))
	cov := CheckCoverage(full, topLevelOnly(full, v1Members))
	want := []string{"/url", "/preferredTransport", "/protocolVersion", "/additionalInterfaces"}
	if !cov.Covered() || !slices.Equal(cov.Unsigned, want) {
		t.Fatalf("%+v", cov)
	}
	// Pointing the v0.3 rendering at an endpoint the v1 members do not list
	// is what a hosted-file editor would do.
	evil := strings.Replace(string(raw), `"url": "http://jsonrpc.v03.com",
  "preferredTransport"`, `"url": "http://evil.example",
  "preferredTransport"`, 1)
	if evil == string(raw) {
		t.Fatal("fixture changed")
	}
	full = mustTree(t, evil)
	cov = CheckCoverage(full, topLevelOnly(full, v1Members))
	if cov.Covered() || !slices.Equal(cov.Disagreeing, want) || len(cov.Unsigned) != 0 {
		t.Fatalf("%+v", cov)
	}
}

// Under a partial profile the view Cardex keeps is the view of the signed
// members: a covered card normalizes to the same Card (its shape aside)
// from the whole document and from the signed members alone.
func TestCoveredCardsHaveTheSignedView(t *testing.T) {
	entries, err := os.ReadDir("testdata/cards")
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for _, e := range entries {
		raw, _ := os.ReadFile("testdata/cards/" + e.Name())
		p, err := Parse(raw, Options{})
		if err != nil {
			continue
		}
		if len(p.Card.Interfaces) == 0 {
			// Without an endpoint the protocol version is the shape's
			// label, which legacy members written empty still set.
			continue
		}
		signed := topLevelOnly(p.Tree, v1Members)
		cov := CheckCoverage(p.Tree, signed)
		if !cov.Covered() {
			continue
		}
		covered++
		view := (&normalizer{}).card(signed)
		whole := *p.Card
		view.Shape, whole.Shape = "", ""
		view.Signatures, whole.Signatures = nil, nil
		if !reflect.DeepEqual(&whole, view) {
			t.Errorf("%s: covered but the views differ:\n%+v\n%+v", e.Name(), whole, *view)
		}
	}
	if covered < 5 {
		t.Fatalf("only %d covered cards", covered)
	}
}

func TestCoverageOfV03CardUnderAV1OnlyProjection(t *testing.T) {
	// A v0.3 card's endpoints are all outside a v1-only signature.
	full := mustTree(t, `{"name":"A","description":"d","version":"1","url":"https://a.example/a2a","protocolVersion":"0.3.0",
		"capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[]}`)
	cov := CheckCoverage(full, topLevelOnly(full, v1Members))
	if !slices.Equal(cov.Disagreeing, []string{"/url", "/protocolVersion"}) {
		t.Fatalf("%+v", cov)
	}
}

func TestCoverageIgnoresDefaultsAndVendorKeys(t *testing.T) {
	full := mustTree(t, `{"name":"A","description":"d","version":"1",
		"supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[],
		"url":"","preferredTransport":null,"supportsAuthenticatedExtendedCard":false,"additionalInterfaces":[],"x-vendor":{"url":"https://x.example"}}`)
	if cov := CheckCoverage(full, topLevelOnly(full, v1Members)); !cov.Covered() || len(cov.Unsigned) != 0 {
		t.Fatalf("%+v", cov)
	}
	if cov := CheckCoverage(full, full); !cov.Covered() || len(cov.Unsigned) != 0 {
		t.Fatalf("identical: %+v", cov)
	}
	if cov := CheckCoverage(nil, full); !cov.Covered() {
		t.Fatalf("nil: %+v", cov)
	}
}

// Thousands of unsigned members produce a bounded list
// and the decision still names the disagreeing top-level member.
func TestCoverageIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name":"A","description":"d","version":"1",
		"supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id":"s` + strconv.Itoa(i) + `","name":"S","description":"d","tags":["t"],"security":[{"k":[]}]}`)
	}
	b.WriteString(`],"url":"https://evil.example/a2a"}`)
	full := mustTree(t, b.String())
	signed := topLevelOnly(full, v1Members)
	// The projection drops skills[].security too (it is not a v1 member).
	skills := &sj.Value{Kind: sj.Array}
	for _, s := range full.Get("skills").Array {
		skills.Array = append(skills.Array, without(s, skillSchema, "security"))
	}
	for i, m := range signed.Object {
		if m.Key == "skills" {
			signed.Object[i].Value = skills
		}
	}
	cov := CheckCoverage(full, signed)
	// At most the bound, plus one top-level name per member whose
	// disagreeing parts all lie past it (here /url, the last member).
	if cov.Covered() || len(cov.Disagreeing)+len(cov.Unsigned) != maxCoveragePointers+1 {
		t.Fatalf("%d disagreeing, %d unsigned", len(cov.Disagreeing), len(cov.Unsigned))
	}
	if cov.Disagreeing[0] != "/skills/0/security" || cov.Disagreeing[maxCoveragePointers] != "/url" {
		t.Fatalf("%+v", cov.Disagreeing)
	}
}

// HTTP authentication scheme names are case-insensitive: an unsigned v0.3
// "bearer" restates the signed "Bearer" (as a2a-js hybrids write them).
func TestCoverageBearerSpellings(t *testing.T) {
	for _, spelling := range []string{"Bearer", "bearer", "BEARER"} {
		full := mustTree(t, `{"name":"A","description":"d","version":"1",
			"supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
			"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"},"type":"http","scheme":"`+spelling+`"}},
			"securityRequirements":[{"schemes":{"bearer":{"list":["read"]}}}],"security":[{"bearer":["read"]}],
			"capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[],
			"url":"https://a.example/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"}`)
		signed := topLevelOnly(full, v1Members)
		schemes := &sj.Value{Kind: sj.Object, Object: []sj.Member{{Key: "bearer",
			Value: without(full.Get("securitySchemes").Get("bearer"), schemeSchema, "type", "scheme")}}}
		for i, m := range signed.Object {
			if m.Key == "securitySchemes" {
				signed.Object[i].Value = schemes
			}
		}
		cov := CheckCoverage(full, signed)
		want := []string{"/securitySchemes/bearer/type", "/securitySchemes/bearer/scheme", "/security", "/url", "/preferredTransport", "/protocolVersion"}
		if !cov.Covered() || !slices.Equal(cov.Uncovered, want) {
			t.Fatalf("%s: %+v", spelling, cov)
		}
	}
	full := mustTree(t, `{"name":"A","supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"},"type":"http","scheme":"Basic"}}}`)
	signed := mustTree(t, `{"name":"A","supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}}}`)
	if cov := CheckCoverage(full, signed); cov.Covered() {
		t.Fatalf("Basic restates Bearer: %+v", cov)
	}
}
