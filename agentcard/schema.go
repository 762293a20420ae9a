package agentcard

import (
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

// The levels of a card, v0.1 … v1.0 and hybrids together (docs/cards.md).
// v0.x members and v1 members live side by side: hybrid cards carry both.
var (
	cardSchema = newSchema(
		str("name"), str("description"), str("version"),
		str("protocolVersion"), str("url"), str("preferredTransport"),
		objects("additionalInterfaces"), objects("supportedInterfaces"),
		object("provider"), str("documentationUrl"), str("iconUrl"),
		object("capabilities"), boolean("supportsAuthenticatedExtendedCard"),
		object("securitySchemes"), objects("security"), objects("securityRequirements"),
		strs("defaultInputModes"), strs("defaultOutputModes"),
		objects("skills"), objects("signatures"), object("authentication"),
	)
	interfaceSchema = newSchema(str("url"), str("protocolBinding"), str("protocolVersion"), str("tenant"))
	legacyIfSchema  = newSchema(str("url"), str("transport"))
	// provider.name is not a spec field but common in the wild
	// (docs/cards.md "SDK JSON mismatches"); it is read as organization.
	providerSchema     = newSchema(str("organization"), str("url"), str("name"))
	capabilitiesSchema = newSchema(
		boolean("streaming"), boolean("pushNotifications"), boolean("extendedAgentCard"),
		boolean("stateTransitionHistory"), objects("extensions"),
	)
	extensionSchema = newSchema(str("uri"), str("description"), boolean("required"), object("params"))
	skillSchema     = newSchema(
		str("id"), str("name"), str("description"),
		strs("tags"), strs("examples"), strs("inputModes"), strs("outputModes"),
		objects("security"), objects("securityRequirements"),
	)
	signatureSchema = newSchema(str("protected"), str("signature"), object("header"))
	authSchema      = newSchema(strs("schemes"), anyValue("credentials"))
	// A security scheme in either form: `type`-tagged (v0.2/v0.3) or
	// wrapped in exactly one oneof key (v1); hybrids carry both.
	schemeSchema = newSchema(
		str("type"), str("description"), str("in"), str("name"), str("scheme"),
		str("bearerFormat"), object("flows"), str("openIdConnectUrl"), str("oauth2MetadataUrl"),
		object("apiKeySecurityScheme"), object("httpAuthSecurityScheme"), object("oauth2SecurityScheme"), object("openIdConnectSecurityScheme"), object("mtlsSecurityScheme"),
	)
	wrappedSchemeSchema = newSchema(
		str("description"), str("location"), str("name"), str("scheme"), str("bearerFormat"),
		object("flows"), str("oauth2MetadataUrl"), str("openIdConnectUrl"),
	)
	flowsSchema = newSchema(
		object("authorizationCode"), object("clientCredentials"), object("implicit"),
		object("password"), object("deviceCode"),
	)
	flowSchema = newSchema(
		str("authorizationUrl"), str("tokenUrl"), str("refreshUrl"), str("deviceAuthorizationUrl"),
		object("scopes"), boolean("pkceRequired"),
	)
	requirementSchema = newSchema(object("schemes"))
	scopeListSchema   = newSchema(strs("list"))
)
