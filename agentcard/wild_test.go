package agentcard

import (
	"slices"
	"testing"
)

// What the wild publishes: near-miss binding names read as the spec's names
// with a warning, so binding=JSONRPC finds them.
func TestNearMissBindingsAreNormalized(t *testing.T) {
	p := mustParse(t, []byte(`{"name":"a","description":"d","version":"1","supportedInterfaces":[
		{"url":"https://a.example/1","protocolBinding":"jsonrpc","protocolVersion":"1.0"},
		{"url":"https://a.example/2","protocolBinding":"json-rpc","protocolVersion":"1.0"},
		{"url":"https://a.example/3","protocolBinding":"HTTP_JSON","protocolVersion":"1.0"},
		{"url":"https://a.example/4","protocolBinding":"http+json","protocolVersion":"1.0"},
		{"url":"https://a.example/5","protocolBinding":"grpc","protocolVersion":"1.0"},
		{"url":"https://a.example/6","protocolBinding":"https://bindings.example/ws/v1","protocolVersion":"1.0"},
		{"url":"https://a.example/7","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"skills":[]}`), Options{})
	var got []string
	for _, it := range p.Card.Interfaces {
		got = append(got, it.Binding)
	}
	want := []string{"JSONRPC", "JSONRPC", "HTTP+JSON", "HTTP+JSON", "GRPC", "https://bindings.example/ws/v1", "JSONRPC"}
	if !slices.Equal(got, want) {
		t.Fatalf("bindings %q", got)
	}
	var warnedAt []string
	for _, pr := range p.Problems {
		if pr.Code == CodeNoncanonicalBinding {
			warnedAt = append(warnedAt, pr.Pointer)
		}
	}
	if !slices.Equal(warnedAt, []string{"/supportedInterfaces/0/protocolBinding", "/supportedInterfaces/1/protocolBinding",
		"/supportedInterfaces/2/protocolBinding", "/supportedInterfaces/3/protocolBinding", "/supportedInterfaces/4/protocolBinding"}) {
		t.Fatalf("warned at %q", warnedAt)
	}
	// v0.x transports too.
	p = warned(t, `{"name":"a","url":"https://a.example/","preferredTransport":"json-rpc","additionalInterfaces":[{"url":"https://a.example/r","transport":"HTTP_JSON"}]}`,
		Options{}, CodeNoncanonicalBinding, "/preferredTransport")
	if p.Card.Interfaces[0].Binding != "JSONRPC" || p.Card.Interfaces[1].Binding != "HTTP+JSON" {
		t.Fatalf("%+v", p.Card.Interfaces)
	}
}

// A v0.1 card saying authentication "none" needs no authentication.
func TestV01AuthenticationNone(t *testing.T) {
	p := mustParse(t, []byte(`{"name":"a","url":"https://a.example/","authentication":{"schemes":["none"]},"skills":[]}`), Options{})
	if len(p.Card.SecuritySchemes) != 0 || len(p.Card.SecurityRequirements) != 0 {
		t.Fatalf("schemes %+v requirements %+v", p.Card.SecuritySchemes, p.Card.SecurityRequirements)
	}
	p = mustParse(t, []byte(`{"name":"a","url":"https://a.example/","authentication":{"schemes":["None","bearer"]},"skills":[]}`), Options{})
	if len(p.Card.SecuritySchemes) != 1 || len(p.Card.SecurityRequirements) != 1 || p.Card.SecurityRequirements[0].Schemes["bearer"] == nil {
		t.Fatalf("schemes %+v requirements %+v", p.Card.SecuritySchemes, p.Card.SecurityRequirements)
	}
}

func TestPlaceholderURLsAndBadPorts(t *testing.T) {
	for _, c := range []struct{ url, code string }{
		{"https://<LOOKER_URL>/api/4.0", CodePlaceholderURL},
		{"https://a.example/${PATH}", CodePlaceholderURL},
		{"https://a.example/agents/{id}", CodePlaceholderURL},
		{"https://a.example:99999/a2a", CodeInvalidPort},
		{"https://a.example:0/a2a", CodeInvalidPort},
	} {
		warned(t, `{"name":"a","supportedInterfaces":[{"url":"`+c.url+`","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
			Options{}, c.code, "/supportedInterfaces/0/url")
	}
	p := mustParse(t, []byte(`{"name":"a","supportedInterfaces":[{"url":"https://a.example:8443/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`), Options{})
	for _, pr := range p.Problems {
		if pr.Code == CodePlaceholderURL || pr.Code == CodeInvalidPort {
			t.Fatalf("good URL flagged: %+v", pr)
		}
	}
}

// An MCP endpoint listed in a card is no A2A interface: its 2025-06-18 is
// not an A2A protocol version.
func TestOtherProtocolsStayOutOfA2AVersions(t *testing.T) {
	p := mustParse(t, []byte(`{"name":"a","supportedInterfaces":[
		{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
		{"url":"https://a.example/mcp","protocolBinding":"MCP","protocolVersion":"2025-06-18"}]}`), Options{})
	if !slices.Equal(p.Card.ProtocolVersions, []string{"1.0"}) || len(p.Card.Interfaces) != 2 ||
		!p.Card.Interfaces[0].IsA2A() || p.Card.Interfaces[1].IsA2A() {
		t.Fatalf("versions %q interfaces %+v", p.Card.ProtocolVersions, p.Card.Interfaces)
	}
}
