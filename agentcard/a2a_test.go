package agentcard

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// v1Schema is the AgentCard definition of the JSON Schema generated from
// the v1.0.1 proto: camelCase members, additionalProperties false.
func v1Schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/schema/A2A_v1.0.1_GENERATED-from-proto_a2a.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///a2a.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file:///a2a.json#/$defs/AgentCard")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func a2aJSON(t *testing.T, c *Card) []byte {
	t.Helper()
	b, err := json.Marshal(c.A2A())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every card Cardex accepts, of any protocol version, renders as a v1.0
// AgentCard the v1 schema accepts, with every REQUIRED member present.
func TestA2ARenderingIsAV1AgentCard(t *testing.T) {
	schema := v1Schema(t)
	// The schema is a gate: Cardex's own member names fail it.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"name":"x","interfaces":[]}`))
	if schema.Validate(bad) == nil {
		t.Fatal("the schema accepts a member the v1 AgentCard does not have")
	}
	entries, err := os.ReadDir("testdata/cards")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		raw, _ := os.ReadFile("testdata/cards/" + e.Name())
		p, err := Parse(raw, Options{})
		if err != nil {
			continue
		}
		n++
		b := a2aJSON(t, p.Card)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s: %v\n%s", e.Name(), err, b)
		}
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		for _, k := range []string{"name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
			if m[k] == nil || string(m[k]) == "null" {
				t.Errorf("%s: REQUIRED %s missing: %s", e.Name(), k, b)
			}
		}
		if _, ok := m["interfaces"]; ok {
			t.Errorf("%s: Cardex's own name leaked: %s", e.Name(), b)
		}
	}
	if n < 20 {
		t.Fatalf("only %d cards", n)
	}
}

// A v1 card written in the spec's form comes back as itself (signatures
// aside: they sign the bytes as served, not a rendering).
func TestA2ARenderingOfTheSpecSample(t *testing.T) {
	raw, err := os.ReadFile("testdata/cards/A2A_main_docs_specification.md_8.5-sample-agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	json.Unmarshal(raw, &want)
	delete(want, "signatures")
	json.Unmarshal(a2aJSON(t, p.Card), &got)
	if !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		t.Fatalf("rendering differs:\nwant %s\ngot  %s", w, g)
	}
}

// A v0.3 card reaches v1 clients in the v1 names: its url and transports
// become supportedInterfaces with the card's protocol version, `security`
// becomes securityRequirements, `type` schemes the oneof wrappers.
func TestA2ARenderingOfAV03Card(t *testing.T) {
	p, err := Parse([]byte(`{"name":"Old","description":"d","version":"1","protocolVersion":"0.3.0",
		"url":"https://old.example/rpc","preferredTransport":"JSONRPC",
		"additionalInterfaces":[{"url":"https://old.example/rest","transport":"HTTP+JSON"}],
		"capabilities":{"streaming":true},"supportsAuthenticatedExtendedCard":true,
		"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"},
			"oauth":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"https://old.example/token","scopes":{"read":"Read"}},
				"password":{"tokenUrl":"https://old.example/token2","scopes":{}}}}},
		"security":[{"key":[]},{"oauth":["read"]}],
		"defaultInputModes":["text"],"defaultOutputModes":["text"],
		"skills":[{"id":"s","name":"S","description":"d","tags":["A","a"],"security":[{"oauth":["read"]}]}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(a2aJSON(t, p.Card))
	want := `{"name":"Old","description":"d","supportedInterfaces":[` +
		`{"url":"https://old.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"0.3"},` +
		`{"url":"https://old.example/rest","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}],` +
		`"version":"1","capabilities":{"streaming":true,"extendedAgentCard":true},` +
		`"securitySchemes":{"key":{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}},` +
		`"oauth":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://old.example/token","scopes":{"read":"Read"}}}}}},` +
		`"securityRequirements":[{"schemes":{"key":{}}},{"schemes":{"oauth":{"list":["read"]}}}],` +
		`"defaultInputModes":["text"],"defaultOutputModes":["text"],` +
		`"skills":[{"id":"s","name":"S","description":"d","tags":["a"],"securityRequirements":[{"schemes":{"oauth":{"list":["read"]}}}]}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if strings.Contains(got, "signatures") || (*Card)(nil).A2A() != nil {
		t.Fatal("signatures or nil card")
	}
}

// The served card names no interface an SDK rejects: one of another
// protocol, or without a URL, binding or protocol version, is left out;
// a version missing everywhere is the card's.
func TestA2AInterfacesAreUsable(t *testing.T) {
	p, err := Parse([]byte(`{"name":"A","description":"d","version":"1","skills":[],"capabilities":{},
		"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"supportedInterfaces":[
			{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
			{"url":"https://a.example/mcp","protocolBinding":"JSONRPC","protocolVersion":"2025-06-18"},
			{"url":"https://a.example/sse","protocolBinding":"SSE","protocolVersion":"1.0"},
			{"url":"https://a.example/nobinding","protocolVersion":"1.0"},
			{"url":"https://a.example/noversion","protocolBinding":"HTTP+JSON"},
			{"url":"","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(p.Card.A2A().SupportedInterfaces)
	if want := `[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]`; string(got) != want {
		t.Fatalf("interfaces %s", got)
	}
	p, err = Parse([]byte(`{"name":"A","description":"d","version":"1","skills":[],"capabilities":{},"protocolVersion":"0.3.0",
		"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC"}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(p.Card.A2A().SupportedInterfaces)
	if want := `[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]`; string(got) != want {
		t.Fatalf("interfaces %s (versions %q)", got, p.Card.ProtocolVersions)
	}
}
