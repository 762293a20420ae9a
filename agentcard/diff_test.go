package agentcard

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	sj "github.com/cardexhq/cardex/strictjson"
)

func baseCard(t *testing.T) *Card {
	t.Helper()
	return mustParse(t, readCard(t, "A2A_main_"), Options{}).Card
}

func diffKinds(d []Change) []string {
	var out []string
	for _, c := range d {
		out = append(out, c.Kind+" "+c.Path)
	}
	return out
}

func protectedWithKID(kid string) string {
	b, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": kid})
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestDiffEachKind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *Card)
		want   []string
		old    any
		new    any
	}{
		{"name", func(c *Card) { c.Name = "Other" }, []string{"name-changed /name"}, "GeoSpatial Route Planner Agent", "Other"},
		{"description", func(c *Card) { c.Description = "d" }, []string{"description-changed /description"}, nil, "d"},
		{"version", func(c *Card) { c.Version = "1.3.0" }, []string{"version-changed /version"}, "1.2.0", "1.3.0"},
		{"provider", func(c *Card) { c.Provider = &Provider{Organization: "X", URL: "https://x.example"} }, []string{"provider-changed /provider"},
			&Provider{Organization: "Example Geo Services Inc.", URL: "https://www.examplegeoservices.com"}, &Provider{Organization: "X", URL: "https://x.example"}},
		{"provider-removed", func(c *Card) { c.Provider = nil }, []string{"provider-changed /provider"}, nil, (*Provider)(nil)},
		{"icon", func(c *Card) { c.IconURL = "" }, []string{"link-changed /iconUrl"}, "https://georoute-agent.example.com/icon.png", ""},
		{"interface-added", func(c *Card) {
			c.Interfaces = append(c.Interfaces, Interface{URL: "https://georoute-agent.example.com/a2a/v03", Binding: "JSONRPC", ProtocolVersion: "0.3"})
		}, []string{"interface-added /interfaces/3"}, nil, Interface{URL: "https://georoute-agent.example.com/a2a/v03", Binding: "JSONRPC", ProtocolVersion: "0.3"}},
		{"interface-removed", func(c *Card) { c.Interfaces = c.Interfaces[1:] }, []string{"interface-removed /interfaces/0"},
			Interface{URL: "https://georoute-agent.example.com/a2a/v1", Binding: "JSONRPC", ProtocolVersion: "1.0"}, nil},
		{"interface-version", func(c *Card) { c.Interfaces[2].ProtocolVersion = "1.1" }, []string{"interface-removed /interfaces/2", "interface-added /interfaces/2"}, nil, nil},
		{"capability", func(c *Card) { c.Capabilities.Streaming = false }, []string{"capability-changed /capabilities/streaming"}, true, false},
		{"extension-added", func(c *Card) { c.Capabilities.Extensions = []Extension{{URI: "urn:a/b", Required: true}} },
			[]string{"capability-changed /capabilities/extensions/urn:a~1b"}, nil, Extension{URI: "urn:a/b", Required: true}},
		{"security-scheme", func(c *Card) { c.SecuritySchemes[0].OpenIDConnectURL = "https://evil.example/oidc" },
			[]string{"security-changed /securitySchemes/google"}, nil, nil},
		{"security-requirements", func(c *Card) { c.SecurityRequirements[0].Schemes["google"] = []string{"openid"} },
			[]string{"security-changed /securityRequirements"}, nil, nil},
		{"modes", func(c *Card) { c.DefaultInputModes = []string{"text/plain"} }, []string{"modes-changed /defaultInputModes"}, nil, []string{"text/plain"}},
		{"skill-added", func(c *Card) { c.Skills = append(c.Skills, Skill{ID: "new", Name: "New"}) }, []string{"skill-added /skills/new"}, nil, nil},
		{"skill-removed", func(c *Card) { c.Skills = c.Skills[1:] }, []string{"skill-removed /skills/route-optimizer-traffic"}, nil, nil},
		{"skill-changed", func(c *Card) { c.Skills[1].Tags = append(c.Skills[1].Tags, "new") }, []string{"skill-changed /skills/custom-map-generator"}, nil, nil},
		{"skill-security", func(c *Card) {
			c.Skills[1].SecurityRequirements = []SecurityRequirement{{Schemes: map[string][]string{"google": {}}}}
		},
			[]string{"skill-changed /skills/custom-map-generator"}, nil, nil},
		{"key", func(c *Card) { c.Signatures = []Signature{{Protected: protectedWithKID("key-2")}} }, []string{"key-changed /signatures"},
			[]string{"key-1"}, []string{"key-2"}},
		{"key-unsigned", func(c *Card) { c.Signatures = nil }, []string{"key-changed /signatures"}, []string{"key-1"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := baseCard(t), baseCard(t)
			tc.change(cur)
			d := Diff(old, cur)
			if got := diffKinds(d); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Diff = %q, want %q", got, tc.want)
			}
			if tc.old != nil && !reflect.DeepEqual(d[0].Old, tc.old) {
				t.Errorf("old = %#v, want %#v", d[0].Old, tc.old)
			}
			if tc.new != nil && !reflect.DeepEqual(d[0].New, tc.new) {
				t.Errorf("new = %#v, want %#v", d[0].New, tc.new)
			}
			if _, err := json.Marshal(d); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDiffIdenticalAndNil(t *testing.T) {
	if d := Diff(baseCard(t), baseCard(t)); d != nil {
		t.Fatalf("identical cards: %+v", d)
	}
	if Diff(nil, baseCard(t)) != nil || Diff(baseCard(t), nil) != nil || Diff(nil, nil) != nil {
		t.Fatal("Diff with a nil card is not nil")
	}
	// A card read back from storage (JSON) equals the parsed one: nil and
	// empty lists, and the signatures kept aside, do not count as changes
	// except through key-changed.
	c := baseCard(t)
	b, _ := json.Marshal(c)
	var back Card
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.Signatures = c.Signatures
	if d := Diff(c, &back); d != nil {
		t.Fatalf("round trip: %+v", d)
	}
	// Extension params with characters encoding/json escapes on the way out.
	c = mustParse(t, readCard(t, "GENERATED_a2a-js-1.3.0_generateAgentCardSignature_edge"), Options{}).Card
	c.Capabilities.Extensions[0].Params = json.RawMessage(`{"html":"<b>&</b>","n":1e+21}`)
	b, _ = json.Marshal(c)
	back = Card{}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.Signatures = c.Signatures
	if string(back.Capabilities.Extensions[0].Params) == string(c.Capabilities.Extensions[0].Params) {
		t.Fatal("test premise: encoding/json no longer escapes params")
	}
	if d := Diff(c, &back); d != nil {
		t.Fatalf("params round trip: %+v", d)
	}
	back.Capabilities.Extensions[0].Params = json.RawMessage(`{"html":"<b>&</b>","n":2}`)
	if got := diffKinds(Diff(c, &back)); !reflect.DeepEqual(got, []string{"capability-changed /capabilities/extensions/urn:x:ext"}) {
		t.Fatalf("params change: %q", got)
	}
}

func TestDiffOrderAndJSON(t *testing.T) {
	old := baseCard(t)
	cur := baseCard(t)
	cur.Name = "N"
	cur.Skills = []Skill{cur.Skills[1], {ID: "z"}, {ID: "a"}}
	cur.Skills[0].Name = "changed"
	cur.Capabilities.PushNotifications = false
	cur.Interfaces = cur.Interfaces[:1]
	want := []string{
		"name-changed /name",
		"interface-removed /interfaces/1",
		"interface-removed /interfaces/2",
		"capability-changed /capabilities/pushNotifications",
		"skill-removed /skills/route-optimizer-traffic",
		"skill-changed /skills/custom-map-generator",
		"skill-added /skills/z",
		"skill-added /skills/a",
	}
	d := Diff(old, cur)
	if got := diffKinds(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff = %q\nwant %q", got, want)
	}
	b, _ := json.Marshal(d[0])
	if string(b) != `{"kind":"name-changed","path":"/name","old":"GeoSpatial Route Planner Agent","new":"N"}` {
		t.Fatalf("JSON = %s", b)
	}
	b, _ = json.Marshal(d[1])
	if string(b) != `{"kind":"interface-removed","path":"/interfaces/1","old":{"url":"https://georoute-agent.example.com/a2a/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"},"new":null}` {
		t.Fatalf("JSON = %s", b)
	}
}

func TestSignatureKIDs(t *testing.T) {
	padded := base64.URLEncoding.EncodeToString([]byte(`{"alg":"EdDSA","kid":"b"}`))
	std := base64.StdEncoding.EncodeToString([]byte(`{"alg":"EdDSA","kid":"a?>"}`))
	c := &Card{Signatures: []Signature{
		{Protected: protectedWithKID("c")}, {Protected: padded}, {Protected: std},
		{Protected: protectedWithKID("c")}, {Protected: "!!!"},
		{Protected: base64.RawURLEncoding.EncodeToString([]byte(`{"kid":1}`))},
		{Protected: base64.RawURLEncoding.EncodeToString([]byte(`{"kid":"x","kid":"y"}`))},
	}}
	if got := SignatureKIDs(c); !reflect.DeepEqual(got, []string{"a?>", "b", "c"}) {
		t.Fatalf("kids = %q", got)
	}
	// The TCK vector (no endpoint: read here without Parse's card rule)
	// names key-1; the NarrativeOS card's kid is only
	// in the unprotected header, which is never read.
	if got := SignatureKIDs(normalizeOnly(t, readCard(t, "a2a-tck_tests_unit_agent_card_card_signing_vectors.json_cardsign-sign-001"))); !reflect.DeepEqual(got, []string{"key-1"}) {
		t.Fatalf("tck kids = %q", got)
	}
	if got := SignatureKIDs(mustParse(t, readCard(t, "wild_0xYuvi_"), Options{}).Card); len(got) != 0 {
		t.Fatalf("unprotected kid read: %q", got)
	}
}

// normalizeOnly reads a document into the model without Parse's verdict on
// whether it is a listable card (the TCK's signing vector has no endpoint).
func normalizeOnly(t *testing.T, data []byte) *Card {
	t.Helper()
	tree, err := sj.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return (&normalizer{}).card(tree)
}
