package aicatalog

import "testing"

// docs/discovery.md "Media types": the spellings in use read as one type.
func TestCanonicalTypeAliases(t *testing.T) {
	for in, want := range map[string]string{
		"application/a2a-agent-card+json":                TypeA2ACard,
		"application/agent-card+json":                    TypeA2ACard,
		"Application/A2A-Agent-Card+JSON; charset=utf-8": TypeA2ACard,
		" application/a2a+json ":                         TypeA2ACard,
		"application/vnd.a2a.agent-card+json":            TypeA2ACard,
		"application/ai-catalog":                         MediaType,
		"application/ai-registry":                        TypeRegistry,
		"application/ai-registry+json":                   TypeRegistry,
		"application/MCP-Server-Card+json":               "application/mcp-server-card+json",
		`text/markdown; profile="urn:air:agent-skills"`:  `text/markdown; profile="urn:air:agent-skills"`,
	} {
		if got := CanonicalType(in); got != want {
			t.Errorf("CanonicalType(%q) = %q, want %q", in, got, want)
		}
	}
	doc, problems, err := Parse([]byte(`{"entries":[{"identifier":"urn:ai:acme.com:agent:fx","type":"application/agent-card+json","url":"https://acme.com/fx.json"}]}`), DefaultLimits)
	if err != nil || len(problems) != 0 || doc.Entries[0].Type != TypeA2ACard || doc.Entries[0].Identifier != "urn:ai:acme.com:agent:fx" {
		t.Fatalf("%+v %v %v", doc, problems, err)
	}
}

// docs/discovery.md "Identifiers": urn:ai: folds to urn:air:, the rest as
// written; other identifiers are not urn:air ones.
func TestIdentifierFolding(t *testing.T) {
	for _, c := range []struct {
		in, folded string
		legacy     bool
		publisher  string
	}{
		{"urn:air:acme.com:agent:fx", "urn:air:acme.com:agent:fx", false, "acme.com"},
		{"URN:AIR:acme.com:agent:FX", "urn:air:acme.com:agent:FX", false, "acme.com"},
		{"urn:ai:acme.com:agent:fx", "urn:air:acme.com:agent:fx", true, "acme.com"},
		{"urn:AI:acme.com:fx", "urn:air:acme.com:fx", true, "acme.com"},
		{"urn:air:acme.com", "urn:air:acme.com", false, ""},
		{"urn:aix:acme.com:x", "urn:aix:acme.com:x", false, ""},
		{"https://cardex.example/agents/x", "https://cardex.example/agents/x", false, ""},
	} {
		f, legacy := FoldIdentifier(c.in)
		if f != c.folded || legacy != c.legacy || AIRPublisher(c.in) != c.publisher || IsAIR(c.in) != (c.publisher != "") {
			t.Errorf("%q: folded %q legacy %v publisher %q", c.in, f, legacy, AIRPublisher(c.in))
		}
	}
	if got := OwnIdentifier("https://cardex.example/", "a/b"); got != "https://cardex.example/agents/a%2Fb" {
		t.Fatal(got)
	}
	if got := OwnARDIdentifier("http://127.0.0.1:8080", "x"); got != "urn:air:127.0.0.1:cardex:x" {
		t.Fatal(got)
	}
	if got := RegistryIdentifier("http://[::1]:8080"); got != "urn:air:--1:registry:cardex" {
		t.Fatal(got)
	}
}
