package agentcard

import (
	"maps"
	"slices"
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// anyKind accepts every JSON type (used for array elements and members
// whose shape varies, such as requirement scope lists).
const anyKind sj.Kind = 0xFF

// field is one member the model knows at one level of the card. Every field
// is also accepted in its snake_case proto spelling, which ProtoJSON parsers
// read as the same field (docs/cards.md).
type field struct {
	name  string
	alias string  // snake_case spelling, "" when it equals name
	kind  sj.Kind // expected JSON type
	elem  sj.Kind // arrays: expected element type
}

// schema is the set of known members of one object level.
type schema struct {
	fields []field
}

func newSchema(fields ...field) *schema {
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.name] {
			// A member both in the v1 table and among a level's v0.x
			// members would be read twice; fail every test at once.
			panic("agentcard: schema lists " + f.name + " twice")
		}
		seen[f.name] = true
	}
	for i := range fields {
		if a := snakeCase(fields[i].name); a != fields[i].name {
			fields[i].alias = a
		}
	}
	return &schema{fields: fields}
}

// lookup returns the index of the field whose name or alias is exactly key.
func (s *schema) lookup(key string) (int, bool) {
	for i := range s.fields {
		if s.fields[i].name == key || (s.fields[i].alias != "" && s.fields[i].alias == key) {
			return i, true
		}
	}
	return 0, false
}

// caseVariant returns the field key differs from only in case (Unicode
// simple folding, as encoding/json's case-insensitive matching does, so
// "ſkills" with U+017F is caught as well).
func (s *schema) caseVariant(key string) (string, bool) {
	for _, f := range s.fields {
		if strings.EqualFold(key, f.name) {
			return f.name, true
		}
		if f.alias != "" && strings.EqualFold(key, f.alias) {
			return f.alias, true
		}
	}
	return "", false
}

func (s *schema) index(name string) int {
	for i := range s.fields {
		if s.fields[i].name == name {
			return i
		}
	}
	panic("agentcard: schema has no field " + name)
}

func snakeCase(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			b.WriteByte(c + ('a' - 'A'))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func str(name string) field      { return field{name: name, kind: sj.String} }
func boolean(name string) field  { return field{name: name, kind: sj.Bool} }
func object(name string) field   { return field{name: name, kind: sj.Object} }
func strs(name string) field     { return field{name: name, kind: sj.Array, elem: sj.String} }
func objects(name string) field  { return field{name: name, kind: sj.Array, elem: sj.Object} }
func anyValue(name string) field { return field{name: name, kind: anyKind} }

// v1Fields are the members of the v1 messages msgs (fields.go), each once,
// typed by the JSON kind its proto type is written as: a level of the parse
// schema reads every v1 member of the messages found there.
func v1Fields(msgs ...*V1Message) []field {
	var out []field
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, name := range slices.Sorted(maps.Keys(m.Fields)) {
			if seen[name] {
				continue
			}
			seen[name] = true
			switch m.Fields[name].Kind {
			case KindString:
				out = append(out, str(name))
			case KindBool:
				out = append(out, boolean(name))
			case KindStringList:
				out = append(out, strs(name))
			case KindMessageList:
				out = append(out, objects(name))
			default: // messages, maps and Structs are JSON objects
				out = append(out, object(name))
			}
		}
	}
	return out
}

// The levels of a card, v0.1 … v1.0 and hybrids together (docs/cards.md):
// the v1 members of the field table, and beside them the v0.x members (and
// the common non-spec ones) that only the parser reads; hybrid cards carry
// both.
var (
	cardSchema = newSchema(append(v1Fields(V1Card),
		str("protocolVersion"), str("url"), str("preferredTransport"), objects("additionalInterfaces"),
		boolean("supportsAuthenticatedExtendedCard"), objects("security"), object("authentication"),
	)...)
	interfaceSchema = newSchema(v1Fields(agentInterfaceMsg)...)
	legacyIfSchema  = newSchema(str("url"), str("transport"))
	// provider.name is not a spec field but common in the wild
	// (docs/cards.md "SDK JSON mismatches"); it is read as organization.
	providerSchema     = newSchema(append(v1Fields(agentProviderMsg), str("name"))...)
	capabilitiesSchema = newSchema(append(v1Fields(agentCapabilitiesMsg), boolean("stateTransitionHistory"))...)
	extensionSchema    = newSchema(v1Fields(agentExtensionMsg)...)
	skillSchema        = newSchema(append(v1Fields(agentSkillMsg), objects("security"))...)
	signatureSchema    = newSchema(v1Fields(agentCardSignatureMsg)...)
	authSchema         = newSchema(strs("schemes"), anyValue("credentials"))
	// A security scheme in either form: `type`-tagged (v0.2/v0.3) or
	// wrapped in exactly one oneof key (v1); hybrids carry both.
	schemeSchema = newSchema(append(v1Fields(securitySchemeMsg),
		str("type"), str("description"), str("in"), str("name"), str("scheme"),
		str("bearerFormat"), object("flows"), str("openIdConnectUrl"), str("oauth2MetadataUrl"),
	)...)
	// The members of the five v1 schemes, read by one schema.
	wrappedSchemeSchema = newSchema(v1Fields(apiKeySchemeMsg, httpAuthSchemeMsg, oauth2SchemeMsg, openIDConnectSchemeMsg, mtlsSchemeMsg)...)
	flowsSchema         = newSchema(v1Fields(oauthFlowsMsg)...)
	// The members of the five v1 flows, read by one schema.
	flowSchema        = newSchema(v1Fields(authorizationCodeFlowMsg, clientCredentialsFlowMsg, implicitFlowMsg, passwordFlowMsg, deviceCodeFlowMsg)...)
	requirementSchema = newSchema(v1Fields(securityRequirementMsg)...)
	scopeListSchema   = newSchema(v1Fields(stringListMsg)...)
)
