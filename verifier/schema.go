package verifier

// The v1 AgentCard field table (docs/cards.md, specification/a2a.proto at
// v1.0.1) as the canonicalization profiles need it: for each member its JSON
// kind and its proto presence. Spec §8.4.1 rule 1 decides what a default value
// means per presence: REQUIRED members are always kept, proto3 `optional`
// members are kept whenever they are set, plain members are dropped when they
// hold their default ("" / false / 0 / [] / {}). Message-typed members have
// explicit presence in proto3, so a set message is kept even when empty (the
// spec-literal reference keeps `{"schemes":{"bearer":{}}}`, interop/edge-v1).

type presence uint8

const (
	plain    presence = iota // implicit presence: default value means absent
	required                 // (google.api.field_behavior) = REQUIRED
	optional                 // proto3 `optional`: explicit presence
)

type fieldKind uint8

const (
	kindString      fieldKind = iota
	kindBool                  // bool scalar
	kindStringList            // repeated string
	kindStringMap             // map<string, string> (OAuth scopes)
	kindMessage               // a nested message (also each oneof member)
	kindMessageList           // repeated message
	kindMessageMap            // map<string, message>
	kindStruct                // google.protobuf.Struct: any JSON object, kept verbatim
)

type field struct {
	pres presence
	kind fieldKind
	msg  *message // for kindMessage, kindMessageList, kindMessageMap
}

type message struct {
	name   string
	fields map[string]field
}

func str(p presence) field     { return field{pres: p, kind: kindString} }
func boolean(p presence) field { return field{pres: p, kind: kindBool} }
func strList(p presence) field { return field{pres: p, kind: kindStringList} }
func msg(m *message) field     { return field{kind: kindMessage, msg: m} }
func msgList(p presence, m *message) field {
	return field{pres: p, kind: kindMessageList, msg: m}
}

var (
	stringListMsg = &message{name: "StringList", fields: map[string]field{
		"list": strList(plain),
	}}
	securityRequirementMsg = &message{name: "SecurityRequirement", fields: map[string]field{
		"schemes": {kind: kindMessageMap, msg: stringListMsg},
	}}
	apiKeySchemeMsg = &message{name: "APIKeySecurityScheme", fields: map[string]field{
		"description": str(plain), "location": str(required), "name": str(required),
	}}
	httpAuthSchemeMsg = &message{name: "HTTPAuthSecurityScheme", fields: map[string]field{
		"description": str(plain), "scheme": str(required), "bearerFormat": str(plain),
	}}
	authorizationCodeFlowMsg = &message{name: "AuthorizationCodeOAuthFlow", fields: map[string]field{
		"authorizationUrl": str(required), "tokenUrl": str(required), "refreshUrl": str(plain),
		"scopes": {pres: required, kind: kindStringMap}, "pkceRequired": boolean(plain),
	}}
	clientCredentialsFlowMsg = &message{name: "ClientCredentialsOAuthFlow", fields: map[string]field{
		"tokenUrl": str(required), "refreshUrl": str(plain), "scopes": {pres: required, kind: kindStringMap},
	}}
	implicitFlowMsg = &message{name: "ImplicitOAuthFlow", fields: map[string]field{
		"authorizationUrl": str(plain), "refreshUrl": str(plain), "scopes": {kind: kindStringMap},
	}}
	passwordFlowMsg = &message{name: "PasswordOAuthFlow", fields: map[string]field{
		"tokenUrl": str(plain), "refreshUrl": str(plain), "scopes": {kind: kindStringMap},
	}}
	deviceCodeFlowMsg = &message{name: "DeviceCodeOAuthFlow", fields: map[string]field{
		"deviceAuthorizationUrl": str(required), "tokenUrl": str(required), "refreshUrl": str(plain),
		"scopes": {pres: required, kind: kindStringMap},
	}}
	oauthFlowsMsg = &message{name: "OAuthFlows", fields: map[string]field{ // a oneof
		"authorizationCode": msg(authorizationCodeFlowMsg), "clientCredentials": msg(clientCredentialsFlowMsg),
		"implicit": msg(implicitFlowMsg), "password": msg(passwordFlowMsg), "deviceCode": msg(deviceCodeFlowMsg),
	}}
	oauth2SchemeMsg = &message{name: "OAuth2SecurityScheme", fields: map[string]field{
		"description": str(plain), "flows": {pres: required, kind: kindMessage, msg: oauthFlowsMsg},
		"oauth2MetadataUrl": str(plain),
	}}
	openIDConnectSchemeMsg = &message{name: "OpenIdConnectSecurityScheme", fields: map[string]field{
		"description": str(plain), "openIdConnectUrl": str(required),
	}}
	mtlsSchemeMsg = &message{name: "MutualTlsSecurityScheme", fields: map[string]field{
		"description": str(plain),
	}}
	securitySchemeMsg = &message{name: "SecurityScheme", fields: map[string]field{ // a oneof wrapper
		"apiKeySecurityScheme": msg(apiKeySchemeMsg), "httpAuthSecurityScheme": msg(httpAuthSchemeMsg),
		"oauth2SecurityScheme": msg(oauth2SchemeMsg), "openIdConnectSecurityScheme": msg(openIDConnectSchemeMsg),
		"mtlsSecurityScheme": msg(mtlsSchemeMsg),
	}}
	agentInterfaceMsg = &message{name: "AgentInterface", fields: map[string]field{
		"url": str(required), "protocolBinding": str(required), "tenant": str(plain), "protocolVersion": str(required),
	}}
	agentProviderMsg = &message{name: "AgentProvider", fields: map[string]field{
		"url": str(required), "organization": str(required),
	}}
	agentExtensionMsg = &message{name: "AgentExtension", fields: map[string]field{
		"uri": str(plain), "description": str(plain), "required": boolean(plain), "params": {kind: kindStruct},
	}}
	agentCapabilitiesMsg = &message{name: "AgentCapabilities", fields: map[string]field{
		"streaming": boolean(optional), "pushNotifications": boolean(optional),
		"extensions": msgList(plain, agentExtensionMsg), "extendedAgentCard": boolean(optional),
	}}
	agentSkillMsg = &message{name: "AgentSkill", fields: map[string]field{
		"id": str(required), "name": str(required), "description": str(required), "tags": strList(required),
		"examples": strList(plain), "inputModes": strList(plain), "outputModes": strList(plain),
		"securityRequirements": msgList(plain, securityRequirementMsg),
	}}
	agentCardSignatureMsg = &message{name: "AgentCardSignature", fields: map[string]field{
		"protected": str(required), "signature": str(required), "header": {kind: kindStruct},
	}}
	agentCardMsg = &message{name: "AgentCard", fields: map[string]field{
		"name":                 str(required),
		"description":          str(required),
		"supportedInterfaces":  msgList(required, agentInterfaceMsg),
		"provider":             msg(agentProviderMsg),
		"version":              str(required),
		"documentationUrl":     str(optional),
		"capabilities":         {pres: required, kind: kindMessage, msg: agentCapabilitiesMsg},
		"securitySchemes":      {kind: kindMessageMap, msg: securitySchemeMsg},
		"securityRequirements": msgList(plain, securityRequirementMsg),
		"defaultInputModes":    strList(required),
		"defaultOutputModes":   strList(required),
		"skills":               msgList(required, agentSkillMsg),
		"signatures":           msgList(plain, agentCardSignatureMsg),
		"iconUrl":              str(optional),
	}}
)
