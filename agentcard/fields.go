package agentcard

// The v1 AgentCard field table (docs/cards.md, specification/a2a.proto at
// v1.0.1): every member of every message, its JSON kind and its proto
// presence. It is written once, here, and read by the parser (the v1
// members of each level of schema.go), the verifier (its canonicalization
// profiles) and checked against the A2A rendering (a2a.go) by
// TestFieldTableOnce.
//
// Spec §8.4.1 rule 1 decides what a default value means per presence:
// REQUIRED members are always kept, proto3 `optional` members are kept
// whenever they are set, plain members are dropped when they hold their
// default ("" / false / 0 / [] / {}). Message-typed members have explicit
// presence in proto3, so a set message is kept even when empty (the
// spec-literal reference keeps `{"schemes":{"bearer":{}}}`, interop/edge-v1).

// Presence is a v1 member's proto presence.
type Presence uint8

const (
	Plain    Presence = iota // implicit presence: default value means absent
	Required                 // (google.api.field_behavior) = REQUIRED
	Optional                 // proto3 `optional`: explicit presence
)

// FieldKind is a v1 member's proto type, as its JSON form shows it.
type FieldKind uint8

const (
	KindString      FieldKind = iota
	KindBool                  // bool scalar
	KindStringList            // repeated string
	KindStringMap             // map<string, string> (OAuth scopes)
	KindMessage               // a nested message (also each oneof member)
	KindMessageList           // repeated message
	KindMessageMap            // map<string, message>
	KindStruct                // google.protobuf.Struct: any JSON object, kept verbatim
)

// V1Field is one member of a v1 message.
type V1Field struct {
	Presence Presence
	Kind     FieldKind
	Message  *V1Message // for KindMessage, KindMessageList, KindMessageMap
}

// V1Message is one v1 message: its proto name and its members by JSON
// name. The tables are read-only.
type V1Message struct {
	Name   string
	Fields map[string]V1Field
}

func v1Str(p Presence) V1Field     { return V1Field{Presence: p, Kind: KindString} }
func v1Boolean(p Presence) V1Field { return V1Field{Presence: p, Kind: KindBool} }
func v1StrList(p Presence) V1Field { return V1Field{Presence: p, Kind: KindStringList} }
func v1Msg(m *V1Message) V1Field   { return V1Field{Kind: KindMessage, Message: m} }
func v1MsgList(p Presence, m *V1Message) V1Field {
	return V1Field{Presence: p, Kind: KindMessageList, Message: m}
}

// The messages of the table, leaves first.
var (
	stringListMsg = &V1Message{Name: "StringList", Fields: map[string]V1Field{
		"list": v1StrList(Plain),
	}}
	securityRequirementMsg = &V1Message{Name: "SecurityRequirement", Fields: map[string]V1Field{
		"schemes": {Kind: KindMessageMap, Message: stringListMsg},
	}}
	apiKeySchemeMsg = &V1Message{Name: "APIKeySecurityScheme", Fields: map[string]V1Field{
		"description": v1Str(Plain), "location": v1Str(Required), "name": v1Str(Required),
	}}
	httpAuthSchemeMsg = &V1Message{Name: "HTTPAuthSecurityScheme", Fields: map[string]V1Field{
		"description": v1Str(Plain), "scheme": v1Str(Required), "bearerFormat": v1Str(Plain),
	}}
	authorizationCodeFlowMsg = &V1Message{Name: "AuthorizationCodeOAuthFlow", Fields: map[string]V1Field{
		"authorizationUrl": v1Str(Required), "tokenUrl": v1Str(Required), "refreshUrl": v1Str(Plain),
		"scopes": {Presence: Required, Kind: KindStringMap}, "pkceRequired": v1Boolean(Plain),
	}}
	clientCredentialsFlowMsg = &V1Message{Name: "ClientCredentialsOAuthFlow", Fields: map[string]V1Field{
		"tokenUrl": v1Str(Required), "refreshUrl": v1Str(Plain), "scopes": {Presence: Required, Kind: KindStringMap},
	}}
	implicitFlowMsg = &V1Message{Name: "ImplicitOAuthFlow", Fields: map[string]V1Field{
		"authorizationUrl": v1Str(Plain), "refreshUrl": v1Str(Plain), "scopes": {Kind: KindStringMap},
	}}
	passwordFlowMsg = &V1Message{Name: "PasswordOAuthFlow", Fields: map[string]V1Field{
		"tokenUrl": v1Str(Plain), "refreshUrl": v1Str(Plain), "scopes": {Kind: KindStringMap},
	}}
	deviceCodeFlowMsg = &V1Message{Name: "DeviceCodeOAuthFlow", Fields: map[string]V1Field{
		"deviceAuthorizationUrl": v1Str(Required), "tokenUrl": v1Str(Required), "refreshUrl": v1Str(Plain),
		"scopes": {Presence: Required, Kind: KindStringMap},
	}}
	oauthFlowsMsg = &V1Message{Name: "OAuthFlows", Fields: map[string]V1Field{ // a oneof
		"authorizationCode": v1Msg(authorizationCodeFlowMsg), "clientCredentials": v1Msg(clientCredentialsFlowMsg),
		"implicit": v1Msg(implicitFlowMsg), "password": v1Msg(passwordFlowMsg), "deviceCode": v1Msg(deviceCodeFlowMsg),
	}}
	oauth2SchemeMsg = &V1Message{Name: "OAuth2SecurityScheme", Fields: map[string]V1Field{
		"description": v1Str(Plain), "flows": {Presence: Required, Kind: KindMessage, Message: oauthFlowsMsg},
		"oauth2MetadataUrl": v1Str(Plain),
	}}
	openIDConnectSchemeMsg = &V1Message{Name: "OpenIdConnectSecurityScheme", Fields: map[string]V1Field{
		"description": v1Str(Plain), "openIdConnectUrl": v1Str(Required),
	}}
	mtlsSchemeMsg = &V1Message{Name: "MutualTlsSecurityScheme", Fields: map[string]V1Field{
		"description": v1Str(Plain),
	}}
	securitySchemeMsg = &V1Message{Name: "SecurityScheme", Fields: map[string]V1Field{ // a oneof wrapper
		"apiKeySecurityScheme": v1Msg(apiKeySchemeMsg), "httpAuthSecurityScheme": v1Msg(httpAuthSchemeMsg),
		"oauth2SecurityScheme": v1Msg(oauth2SchemeMsg), "openIdConnectSecurityScheme": v1Msg(openIDConnectSchemeMsg),
		"mtlsSecurityScheme": v1Msg(mtlsSchemeMsg),
	}}
	agentInterfaceMsg = &V1Message{Name: "AgentInterface", Fields: map[string]V1Field{
		"url": v1Str(Required), "protocolBinding": v1Str(Required), "tenant": v1Str(Plain), "protocolVersion": v1Str(Required),
	}}
	agentProviderMsg = &V1Message{Name: "AgentProvider", Fields: map[string]V1Field{
		"url": v1Str(Required), "organization": v1Str(Required),
	}}
	agentExtensionMsg = &V1Message{Name: "AgentExtension", Fields: map[string]V1Field{
		"uri": v1Str(Plain), "description": v1Str(Plain), "required": v1Boolean(Plain), "params": {Kind: KindStruct},
	}}
	agentCapabilitiesMsg = &V1Message{Name: "AgentCapabilities", Fields: map[string]V1Field{
		"streaming": v1Boolean(Optional), "pushNotifications": v1Boolean(Optional),
		"extensions": v1MsgList(Plain, agentExtensionMsg), "extendedAgentCard": v1Boolean(Optional),
	}}
	agentSkillMsg = &V1Message{Name: "AgentSkill", Fields: map[string]V1Field{
		"id": v1Str(Required), "name": v1Str(Required), "description": v1Str(Required), "tags": v1StrList(Required),
		"examples": v1StrList(Plain), "inputModes": v1StrList(Plain), "outputModes": v1StrList(Plain),
		"securityRequirements": v1MsgList(Plain, securityRequirementMsg),
	}}
	agentCardSignatureMsg = &V1Message{Name: "AgentCardSignature", Fields: map[string]V1Field{
		"protected": v1Str(Required), "signature": v1Str(Required), "header": {Kind: KindStruct},
	}}
	// V1Card is the AgentCard message, the root of the table.
	V1Card = &V1Message{Name: "AgentCard", Fields: map[string]V1Field{
		"name":                 v1Str(Required),
		"description":          v1Str(Required),
		"supportedInterfaces":  v1MsgList(Required, agentInterfaceMsg),
		"provider":             v1Msg(agentProviderMsg),
		"version":              v1Str(Required),
		"documentationUrl":     v1Str(Optional),
		"capabilities":         {Presence: Required, Kind: KindMessage, Message: agentCapabilitiesMsg},
		"securitySchemes":      {Kind: KindMessageMap, Message: securitySchemeMsg},
		"securityRequirements": v1MsgList(Plain, securityRequirementMsg),
		"defaultInputModes":    v1StrList(Required),
		"defaultOutputModes":   v1StrList(Required),
		"skills":               v1MsgList(Required, agentSkillMsg),
		"signatures":           v1MsgList(Plain, agentCardSignatureMsg),
		"iconUrl":              v1Str(Optional),
	}}
)
