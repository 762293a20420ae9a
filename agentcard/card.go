package agentcard

import (
	"encoding/json"

	"github.com/cardexhq/cardex/strictjson"
)

// Card is the normalized, v1-shaped view of an agent card of any protocol
// version (v0.1 … v1.0 and hybrids). It is derived from the one strict parse
// of the fetched bytes and is what Cardex stores, indexes and shows; the raw
// bytes stay the truth for signatures. JSON names follow docs/api.md.
type Card struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	// Shape is how the card was written: "v0.1", "v0.2", "v0.3", "v1" or
	// "hybrid" (v1 members plus v0.3 compatibility members).
	Shape string `json:"shape"`
	// ProtocolVersions are the distinct Major.Minor versions the card's
	// interfaces speak, preferred first.
	ProtocolVersions     []string              `json:"protocolVersions"`
	Provider             *Provider             `json:"provider"`
	DocumentationURL     string                `json:"documentationUrl,omitempty"`
	IconURL              string                `json:"iconUrl,omitempty"`
	Interfaces           []Interface           `json:"interfaces"`
	Capabilities         Capabilities          `json:"capabilities"`
	SecuritySchemes      []SecurityScheme      `json:"securitySchemes"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements"`
	DefaultInputModes    []string              `json:"defaultInputModes"`
	DefaultOutputModes   []string              `json:"defaultOutputModes"`
	Skills               []Skill               `json:"skills"`
	// Signatures are the entries of the top-level `signatures` member as
	// written; the verifier reads them from the tree, this is for display.
	Signatures []Signature `json:"-"`
}

// Provider is the organization that publishes the agent.
type Provider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// Interface is one endpoint: v1 `supportedInterfaces[]`, or the bridged
// v0.2/v0.3 `url` + `preferredTransport` + `additionalInterfaces`.
type Interface struct {
	URL             string `json:"url"`
	Binding         string `json:"protocolBinding"` // JSONRPC, GRPC, HTTP+JSON or a custom URI
	ProtocolVersion string `json:"protocolVersion"` // Major.Minor
	Tenant          string `json:"tenant,omitempty"`
}

// Capabilities are the optional protocol features the agent declares.
type Capabilities struct {
	Streaming         bool        `json:"streaming"`
	PushNotifications bool        `json:"pushNotifications"`
	ExtendedAgentCard bool        `json:"extendedAgentCard"` // v1 flag OR v0.x supportsAuthenticatedExtendedCard
	Extensions        []Extension `json:"extensions"`
}

// Extension is a protocol extension the agent speaks.
type Extension struct {
	URI         string          `json:"uri"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required"`
	Params      json.RawMessage `json:"params,omitempty"` // compact JSON of the params object as written
}

// Security scheme kinds after normalization.
const (
	SchemeAPIKey        = "apiKey"
	SchemeHTTP          = "http"
	SchemeOAuth2        = "oauth2"
	SchemeOpenIDConnect = "openIdConnect"
	SchemeMutualTLS     = "mutualTls"
)

// SecurityScheme is one named entry of `securitySchemes`, from either the
// v0.x `type`-tagged form or the v1 oneof-wrapped form.
type SecurityScheme struct {
	Name              string      `json:"name"`
	Kind              string      `json:"kind"` // one of the Scheme* constants, or "" when unrecognized
	Description       string      `json:"description,omitempty"`
	Location          string      `json:"location,omitempty"`  // apiKey: query, header or cookie
	ParamName         string      `json:"paramName,omitempty"` // apiKey: the header/query/cookie name
	Scheme            string      `json:"scheme,omitempty"`    // http: Bearer, Basic, …
	BearerFormat      string      `json:"bearerFormat,omitempty"`
	OpenIDConnectURL  string      `json:"openIdConnectUrl,omitempty"`
	OAuth2MetadataURL string      `json:"oauth2MetadataUrl,omitempty"`
	Flows             []OAuthFlow `json:"flows,omitempty"`
}

// OAuthFlow is one OAuth 2.0 flow of an oauth2 scheme.
type OAuthFlow struct {
	Kind                   string            `json:"kind"` // authorizationCode, clientCredentials, implicit, password, deviceCode
	AuthorizationURL       string            `json:"authorizationUrl,omitempty"`
	TokenURL               string            `json:"tokenUrl,omitempty"`
	RefreshURL             string            `json:"refreshUrl,omitempty"`
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl,omitempty"`
	Scopes                 map[string]string `json:"scopes,omitempty"`
	PKCERequired           bool              `json:"pkceRequired,omitempty"` // authorizationCode (v1)
}

// SecurityRequirement is one alternative: every named scheme (with its
// scopes) is needed together. Both `{"list":[…]}` and bare-array scope forms
// normalize to this.
type SecurityRequirement struct {
	Schemes map[string][]string `json:"schemes"`
}

// Skill is one thing the agent can do. Tags are trimmed, lowercased and
// deduplicated.
type Skill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	Examples             []string              `json:"examples"`
	InputModes           []string              `json:"inputModes"`
	OutputModes          []string              `json:"outputModes"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// Signature is one entry of the card's `signatures` member as written.
type Signature struct {
	Protected string            `json:"protected"`
	Signature string            `json:"signature"`
	Header    *strictjson.Value `json:"-"`
}

// Severity of a Problem.
type Severity string

// Severities: an error means the document is not a valid card; a warning is
// kept and shown.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding of the parser or linter, located by a JSON pointer
// and named by a stable code.
type Problem struct {
	Pointer  string   `json:"pointer"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}
