package agentcard

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func reqs(rs []SecurityRequirement) []map[string][]string {
	out := []map[string][]string{}
	for _, r := range rs {
		out = append(out, r.Schemes)
	}
	return out
}

func TestScopeForms(t *testing.T) {
	openid := []map[string][]string{{"google": {"openid", "profile", "email"}}}
	for _, tc := range []struct {
		name, prefix string
		card, skill0 []map[string][]string
	}{
		// ProtoJSON {"list":[…]} (spec main §8.5).
		{"list", "A2A_main_", openid, nil},
		// a2a-go's bare arrays {"schemes":{"google":[…]}} (a2a-go#430).
		{"bare-array", "a2a-go_a2a_json", openid, []map[string][]string{{"google": {"https://www.googleapis.com/auth/maps"}}}},
		// The v1.0.0 spec sample still has v0.3 `security`.
		{"v0.3-security-in-v1.0.0-sample", "A2A_v1.0.0_", openid, nil},
		{"v0.3-skill-security", "a2a-go_a2acompat", openid, []map[string][]string{{"example": {}}, {"google": {"openid", "profile", "email"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, readCard(t, tc.prefix), Options{}).Card
			if got := reqs(c.SecurityRequirements); !reflect.DeepEqual(got, tc.card) {
				t.Errorf("card requirements = %v, want %v", got, tc.card)
			}
			got := reqs(c.Skills[0].SecurityRequirements)
			if tc.skill0 == nil {
				if c.Skills[0].SecurityRequirements != nil {
					t.Errorf("skill requirements = %v, want none", got)
				}
			} else if !reflect.DeepEqual(got, tc.skill0) {
				t.Errorf("skill requirements = %v, want %v", got, tc.skill0)
			}
		})
	}
}

func TestEmptyScopeListForms(t *testing.T) {
	// `{}` is how ProtoJSON writes an empty StringList; `{"list":[]}` and `[]` too.
	card := `{"name":"n","supportedInterfaces":[{"url":"https://a.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
	"securitySchemes":{"a":{"httpAuthSecurityScheme":{"scheme":"Bearer"}},"b":{"mtlsSecurityScheme":{}},"c":{"type":"mutualTLS"}},
	"securityRequirements":[{"schemes":{"a":{}}},{"schemes":{"b":{"list":[]},"c":[]}}]}`
	c := mustParse(t, []byte(card), Options{}).Card
	want := []map[string][]string{{"a": {}}, {"b": {}, "c": {}}}
	if got := reqs(c.SecurityRequirements); !reflect.DeepEqual(got, want) {
		t.Fatalf("requirements = %v, want %v", got, want)
	}
	b, _ := json.Marshal(c.SecurityRequirements)
	if string(b) != `[{"schemes":{"a":[]}},{"schemes":{"b":[],"c":[]}}]` {
		t.Fatalf("JSON = %s", b)
	}
	if got := kinds(c); !slices.Equal(got, []string{"a=http", "b=mutualTls", "c=mutualTls"}) {
		t.Fatalf("kinds = %q", got)
	}
}

func TestHybridPythonCard(t *testing.T) {
	p := mustParse(t, readCard(t, "a2a-python_"), Options{})
	c := p.Card
	// supportedInterfaces wins over the v0.3 url/additionalInterfaces rendering.
	if len(c.Interfaces) != 6 || c.Interfaces[0] != (Interface{URL: "http://jsonrpc.v10.com", Binding: "JSONRPC", ProtocolVersion: "1.0"}) ||
		c.Interfaces[3] != (Interface{URL: "http://grpc.v03.com", Binding: "GRPC", ProtocolVersion: "0.3"}) {
		t.Fatalf("interfaces = %+v", c.Interfaces)
	}
	if c.Name != "Complex Agent" || c.Version != "1.2.3" || c.Provider != nil || c.Capabilities.Streaming {
		t.Fatalf("card = %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"skills":[]`, `"defaultInputModes":[]`, `"securitySchemes":[]`, `"securityRequirements":[]`, `"extensions":[]`, `"provider":null`} {
		if !strings.Contains(string(b), frag) {
			t.Errorf("JSON lacks %s: %s", frag, b)
		}
	}
}

func TestLegacyBridging(t *testing.T) {
	c := mustParse(t, readCard(t, "A2A_v0.3.0_"), Options{}).Card
	// The main url is repeated in additionalInterfaces (§5.6 SHOULD): kept once.
	want := []Interface{
		{URL: "https://georoute-agent.example.com/a2a/v1", Binding: "JSONRPC", ProtocolVersion: "0.2"},
		{URL: "https://georoute-agent.example.com/a2a/grpc", Binding: "GRPC", ProtocolVersion: "0.2"},
		{URL: "https://georoute-agent.example.com/a2a/json", Binding: "HTTP+JSON", ProtocolVersion: "0.2"},
	}
	if !slices.Equal(c.Interfaces, want) {
		t.Fatalf("interfaces = %+v", c.Interfaces)
	}
	// supportsAuthenticatedExtendedCard is ORed into capabilities.extendedAgentCard.
	if !c.Capabilities.ExtendedAgentCard || !c.Capabilities.Streaming || !c.Capabilities.PushNotifications {
		t.Fatalf("capabilities = %+v", c.Capabilities)
	}
	if len(c.Signatures) != 1 || !strings.HasPrefix(c.Signatures[0].Protected, "eyJhbGciOiJFUzI1NiIs") {
		t.Fatalf("signatures = %+v", c.Signatures)
	}
	// preferredTransport defaults to JSONRPC; protocolVersion to the shape's.
	c = mustParse(t, []byte(`{"name":"n","url":"https://a.example/rpc","preferredTransport":"GRPC","skills":[]}`), Options{}).Card
	if c.Shape != ShapeV02 || !slices.Equal(c.Interfaces, []Interface{{URL: "https://a.example/rpc", Binding: "GRPC", ProtocolVersion: "0.2"}}) {
		t.Fatalf("card = %+v", c)
	}
	c = mustParse(t, []byte(`{"name":"n","url":"https://a.example/rpc","protocolVersion":"0.3.0","skills":[]}`), Options{}).Card
	if c.Interfaces[0].Binding != "JSONRPC" || !slices.Equal(c.ProtocolVersions, []string{"0.3"}) {
		t.Fatalf("card = %+v", c)
	}
}

func TestProtocolVersionNormalization(t *testing.T) {
	for in, want := range map[string]string{"1.0.0": "1.0", "0.2.9": "0.2", "0.3": "0.3", "1": "1.0", " 1.0 ": "1.0", "10.20.30": "10.20"} {
		if got, ok := majorMinor(in); !ok || got != want {
			t.Errorf("majorMinor(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"v1", "latest", "1.0.0.0", "1..0", "1.x", ""} {
		if _, ok := majorMinor(in); ok {
			t.Errorf("majorMinor(%q) accepted", in)
		}
	}
	p := mustParse(t, []byte(`{"name":"n","supportedInterfaces":[{"url":"https://a.example/","protocolBinding":"JSONRPC","protocolVersion":"latest"},{"url":"https://a.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`), Options{})
	if p.Card.Interfaces[0].ProtocolVersion != "latest" || !slices.Contains(codes(p.Problems), CodeInvalidVersion) {
		t.Fatalf("card = %+v problems = %+v", p.Card.Interfaces, p.Problems)
	}
}

func TestSkillNormalization(t *testing.T) {
	c := mustParse(t, []byte(`{"name":"n","url":"https://a.example/","skills":[
		{"id":"a","name":"A","description":"d","tags":[" Maps","maps","ROUTING ","","routing","Book air tickets"]},
		{"id":"b","name":"B","description":"d","tags":["x"],"examples":["e"],"input_modes":["text/plain"],"outputModes":["image/png"]}]}`), Options{}).Card
	a := c.Skills[0]
	if !slices.Equal(a.Tags, []string{"maps", "routing", "book air tickets"}) {
		t.Fatalf("tags = %q", a.Tags)
	}
	b, _ := json.Marshal(a)
	if !strings.Contains(string(b), `"examples":[],"inputModes":[],"outputModes":[]`) || strings.Contains(string(b), "securityRequirements") {
		t.Fatalf("skill JSON = %s", b)
	}
	// A real card: a2a-samples write tags as phrases in title case.
	air := mustParse(t, readCard(t, "a2a-samples_samples_python_agents_a2a_mcp_agent_cards_air"), Options{}).Card
	if !slices.Equal(air.Skills[0].Tags, []string{"book air tickets"}) || !slices.Equal(air.DefaultInputModes, []string{"text", "text/plain"}) {
		t.Fatalf("air ticketing skill = %+v", air.Skills[0])
	}
	if s := c.Skills[1]; !slices.Equal(s.InputModes, []string{"text/plain"}) || !slices.Equal(s.OutputModes, []string{"image/png"}) ||
		!slices.Equal(s.Examples, []string{"e"}) {
		t.Fatalf("skill = %+v", s)
	}
}

func TestSnakeCaseKeysAreTheFields(t *testing.T) {
	card := `{"name":"n","description":"d","version":"1","supported_interfaces":[{"url":"https://a.example/","protocol_binding":"GRPC","protocol_version":"1.0"}],
	"default_input_modes":["text/plain"],"default_output_modes":["text/plain"],"documentation_url":"https://a.example/doc",
	"capabilities":{"push_notifications":true,"extended_agent_card":true},
	"security_schemes":{"k":{"api_key_security_scheme":{"location":"header","name":"X-Key"}},
	                    "o":{"oauth2_security_scheme":{"flows":{"client_credentials":{"token_url":"https://a.example/t","scopes":{"r":"read"}}}}}},
	"security_requirements":[{"schemes":{"k":{"list":[]}}}],
	"skills":[{"id":"s","name":"S","description":"d","tags":["t"],"input_modes":["a/b"]}]}`
	p := mustParse(t, []byte(card), Options{})
	c := p.Card
	if len(p.Problems) != 0 {
		t.Fatalf("problems = %+v", p.Problems)
	}
	if c.Shape != ShapeV1 || c.Interfaces[0].Binding != "GRPC" || c.DocumentationURL != "https://a.example/doc" ||
		!c.Capabilities.PushNotifications || !c.Capabilities.ExtendedAgentCard || c.DefaultInputModes[0] != "text/plain" ||
		c.Skills[0].InputModes[0] != "a/b" {
		t.Fatalf("card = %+v", c)
	}
	want := []SecurityScheme{
		{Name: "k", Kind: SchemeAPIKey, Location: "header", ParamName: "X-Key"},
		{Name: "o", Kind: SchemeOAuth2, Flows: []OAuthFlow{{Kind: "clientCredentials", TokenURL: "https://a.example/t", Scopes: map[string]string{"r": "read"}}}},
	}
	if !reflect.DeepEqual(c.SecuritySchemes, want) {
		t.Fatalf("schemes = %+v", c.SecuritySchemes)
	}
}

func TestSecuritySchemeForms(t *testing.T) {
	card := `{"name":"n","url":"https://a.example/","securitySchemes":{
	"key":{"type":"apiKey","in":"query","name":"k","description":"d"},
	"basic":{"type":"http","scheme":"Basic"},
	"oa":{"type":"oauth2","oauth2MetadataUrl":"https://a.example/.well-known/oauth-authorization-server","flows":{
		"authorizationCode":{"authorizationUrl":"https://a.example/auth","tokenUrl":"https://a.example/token","refreshUrl":"https://a.example/r","scopes":{"a":"A"}},
		"implicit":{"authorizationUrl":"https://a.example/auth","scopes":{}},
		"deviceCode":{"deviceAuthorizationUrl":"https://a.example/dev","tokenUrl":"https://a.example/token","scopes":{}}}},
	"both":{"type":"http","scheme":"Basic","httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT","description":"v1"}},
	"weird":{"type":"hmac"}}}`
	p := mustParse(t, []byte(card), Options{})
	s := p.Card.SecuritySchemes
	if got := kinds(p.Card); !slices.Equal(got, []string{"key=apiKey", "basic=http", "oa=oauth2", "both=http", "weird="}) {
		t.Fatalf("kinds = %q", got)
	}
	if s[0].Location != "query" || s[0].ParamName != "k" || s[0].Description != "d" || s[1].Scheme != "Basic" {
		t.Fatalf("schemes = %+v", s)
	}
	// Several v0.x flows are all kept, in document order.
	if len(s[2].Flows) != 3 || s[2].Flows[0].Kind != "authorizationCode" || s[2].Flows[0].RefreshURL != "https://a.example/r" ||
		s[2].Flows[1].Kind != "implicit" || s[2].Flows[2].DeviceAuthorizationURL != "https://a.example/dev" ||
		s[2].OAuth2MetadataURL == "" || s[2].Flows[0].Scopes["a"] != "A" {
		t.Fatalf("oauth2 = %+v", s[2])
	}
	// A hybrid entry is read from its v1 wrapper.
	if s[3].Scheme != "Bearer" || s[3].BearerFormat != "JWT" || s[3].Description != "v1" {
		t.Fatalf("hybrid scheme = %+v", s[3])
	}
	if got := codes(p.Problems); !slices.Contains(got, CodeUnknownScheme) {
		t.Fatalf("codes = %q", got)
	}
}

func TestV01AuthenticationMapping(t *testing.T) {
	c := mustParse(t, readCard(t, "wild_Instabidsai_"), Options{}).Card
	if !reflect.DeepEqual(c.SecuritySchemes, []SecurityScheme{{Name: "bearer", Kind: SchemeHTTP, Scheme: "Bearer"}}) {
		t.Fatalf("schemes = %+v", c.SecuritySchemes)
	}
	if got := reqs(c.SecurityRequirements); !reflect.DeepEqual(got, []map[string][]string{{"bearer": {}}}) {
		t.Fatalf("requirements = %v", got)
	}
	// credentials may be a secret: it never reaches the model.
	b, _ := json.Marshal(c)
	if strings.Contains(string(b), "tr_live") {
		t.Fatalf("credentials leaked into the model: %s", b)
	}
}

func TestProviderAndExtensions(t *testing.T) {
	c := mustParse(t, readCard(t, "wild_Laisky_"), Options{}).Card
	if *c.Provider != (Provider{Organization: "Laisky", URL: "https://blog.laisky.com"}) {
		t.Fatalf("provider = %+v", c.Provider)
	}
	c = mustParse(t, readCard(t, "A2A_pr1592_"), Options{}).Card
	ext := c.Capabilities.Extensions
	if len(ext) != 1 || ext[0].URI != "https://github.com/a2aproject/A2A/extensions/aiar.identity/v0" || ext[0].Required {
		t.Fatalf("extensions = %+v", ext)
	}
	// params: compact JSON of the object as written.
	if !strings.HasPrefix(string(ext[0].Params), `{"issuer":"https://example.com","kid":"example-key-2025-01","signedFields":"card","jws":{"protected":"eyJ`) {
		t.Fatalf("params = %s", ext[0].Params)
	}
	// The JWS inside the params is not a card signature (testdata README).
	if c.Signatures != nil {
		t.Fatalf("signatures = %+v", c.Signatures)
	}
}
