package agentcard

import (
	"encoding/json"
	"slices"
)

// AgentCard is an A2A v1.0 AgentCard in the specification's JSON names
// (ProtoJSON lowerCamelCase of specification/a2a.proto): what an A2A SDK
// reads from `/.well-known/agent-card.json`. Card.A2A renders one from the
// normalized model, so a card of any protocol version reaches clients in the
// v1 shape. It carries nothing of Cardex's own (trust, health, problems):
// those stay beside it.
//
// REQUIRED members are always written (as `""`, `[]` or `{}` when the card
// lacks them); other members only when set, as ProtoJSON writers do.
type AgentCard struct {
	Name                 string               `json:"name"`
	Description          string               `json:"description"`
	SupportedInterfaces  []AgentInterface     `json:"supportedInterfaces"`
	Provider             *AgentProvider       `json:"provider,omitempty"`
	Version              string               `json:"version"`
	DocumentationURL     string               `json:"documentationUrl,omitempty"`
	Capabilities         AgentCapabilities    `json:"capabilities"`
	SecuritySchemes      map[string]A2AScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []A2ARequirement     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string             `json:"defaultInputModes"`
	DefaultOutputModes   []string             `json:"defaultOutputModes"`
	Skills               []AgentSkill         `json:"skills"`
	IconURL              string               `json:"iconUrl,omitempty"`
}

// AgentInterface is one endpoint: URL, protocol binding (JSONRPC, GRPC,
// HTTP+JSON or a custom URI), protocol version (Major.Minor) and tenant.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	Tenant          string `json:"tenant,omitempty"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider is the organization that publishes the agent.
type AgentProvider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// AgentCapabilities are the optional features. The normalized model keeps
// only whether a flag is on, so a flag is written when true.
type AgentCapabilities struct {
	Streaming         bool             `json:"streaming,omitempty"`
	PushNotifications bool             `json:"pushNotifications,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
	ExtendedAgentCard bool             `json:"extendedAgentCard,omitempty"`
}

// AgentExtension is a protocol extension the agent speaks.
type AgentExtension struct {
	URI         string          `json:"uri,omitempty"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required,omitempty"`
	Params      json.RawMessage `json:"params,omitempty"`
}

// AgentSkill is one skill. Tags are the normalized ones (trimmed,
// lowercased, de-duplicated).
type AgentSkill struct {
	ID                   string           `json:"id"`
	Name                 string           `json:"name"`
	Description          string           `json:"description"`
	Tags                 []string         `json:"tags"`
	Examples             []string         `json:"examples,omitempty"`
	InputModes           []string         `json:"inputModes,omitempty"`
	OutputModes          []string         `json:"outputModes,omitempty"`
	SecurityRequirements []A2ARequirement `json:"securityRequirements,omitempty"`
}

// A2ARequirement is one alternative of the security requirements: every
// named scheme, with its scopes, is needed together. It is written as
// `{"schemes":{"name":{"list":[…]}}}`, an empty scope list as `{}`
// (ProtoJSON of map<string, StringList>).
type A2ARequirement struct {
	Schemes map[string]ScopeList `json:"schemes"`
}

// ScopeList is the ProtoJSON StringList message of a requirement.
type ScopeList struct {
	List []string `json:"list,omitempty"`
}

// A2AScheme is a v1 security scheme: exactly one of its members is set
// (the proto oneof).
type A2AScheme struct {
	APIKey        *A2AAPIKeyScheme        `json:"apiKeySecurityScheme,omitempty"`
	HTTPAuth      *A2AHTTPAuthScheme      `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2        *A2AOAuth2Scheme        `json:"oauth2SecurityScheme,omitempty"`
	OpenIDConnect *A2AOpenIDConnectScheme `json:"openIdConnectSecurityScheme,omitempty"`
	MutualTLS     *A2AMutualTLSScheme     `json:"mtlsSecurityScheme,omitempty"`
}

// A2AAPIKeyScheme is an API key in a header, query parameter or cookie.
type A2AAPIKeyScheme struct {
	Description string `json:"description,omitempty"`
	Location    string `json:"location"`
	Name        string `json:"name"`
}

// A2AHTTPAuthScheme is an HTTP authentication scheme (Bearer, Basic, …).
type A2AHTTPAuthScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// A2AOAuth2Scheme is OAuth 2.0 with exactly one flow.
type A2AOAuth2Scheme struct {
	Description       string       `json:"description,omitempty"`
	Flows             A2AOAuthFlow `json:"flows"`
	OAuth2MetadataURL string       `json:"oauth2MetadataUrl,omitempty"`
}

// A2AOAuthFlow is the OAuthFlows oneof: one member set.
type A2AOAuthFlow struct {
	AuthorizationCode *A2AFlow `json:"authorizationCode,omitempty"`
	ClientCredentials *A2AFlow `json:"clientCredentials,omitempty"`
	Implicit          *A2AFlow `json:"implicit,omitempty"`
	Password          *A2AFlow `json:"password,omitempty"`
	DeviceCode        *A2AFlow `json:"deviceCode,omitempty"`
}

// A2AFlow holds the members of every flow kind; each kind writes its own
// (the URLs it has and its scopes, REQUIRED in most kinds, so always
// written).
type A2AFlow struct {
	AuthorizationURL       string            `json:"authorizationUrl,omitempty"`
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl,omitempty"`
	TokenURL               string            `json:"tokenUrl,omitempty"`
	RefreshURL             string            `json:"refreshUrl,omitempty"`
	Scopes                 map[string]string `json:"scopes"`
	PKCERequired           bool              `json:"pkceRequired,omitempty"`
}

// A2AOpenIDConnectScheme is OpenID Connect discovery.
type A2AOpenIDConnectScheme struct {
	Description      string `json:"description,omitempty"`
	OpenIDConnectURL string `json:"openIdConnectUrl"`
}

// A2AMutualTLSScheme is mutual TLS.
type A2AMutualTLSScheme struct {
	Description string `json:"description,omitempty"`
}

// A2A renders the card as an A2A v1.0 AgentCard. Cards of older protocol
// versions come out in the v1 shape their normalization gives: v0.x
// endpoints become supportedInterfaces, `security` becomes
// securityRequirements, `type` schemes become the oneof wrappers. What v1 cannot express is left out:
// a security scheme of an unrecognized type, and every OAuth flow of a v0.x
// scheme but the first (v1 allows one). Signatures are not copied: they
// sign the bytes as served (`/card`), not this rendering.
func (c *Card) A2A() *AgentCard {
	if c == nil {
		return nil
	}
	out := &AgentCard{
		Name: c.Name, Description: c.Description, Version: c.Version,
		DocumentationURL: c.DocumentationURL, IconURL: c.IconURL,
		DefaultInputModes:  nonNilStrings(c.DefaultInputModes),
		DefaultOutputModes: nonNilStrings(c.DefaultOutputModes),
		Skills:             make([]AgentSkill, 0, len(c.Skills)),
		Capabilities: AgentCapabilities{Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			ExtendedAgentCard: c.Capabilities.ExtendedAgentCard},
		SecurityRequirements: a2aRequirements(c.SecurityRequirements),
	}
	out.SupportedInterfaces = a2aInterfaces(c)
	if c.Provider != nil {
		out.Provider = &AgentProvider{URL: c.Provider.URL, Organization: c.Provider.Organization}
	}
	for _, e := range c.Capabilities.Extensions {
		out.Capabilities.Extensions = append(out.Capabilities.Extensions, AgentExtension(e))
	}
	for _, s := range c.SecuritySchemes {
		if sch, ok := a2aScheme(s); ok {
			if out.SecuritySchemes == nil {
				out.SecuritySchemes = map[string]A2AScheme{}
			}
			out.SecuritySchemes[s.Name] = sch
		}
	}
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description,
			Tags: nonNilStrings(s.Tags), Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes,
			SecurityRequirements: a2aRequirements(s.SecurityRequirements)})
	}
	return out
}

// a2aInterfaces are the interfaces an SDK can connect with, each with its
// URL, binding and protocol version: an SDK rejects an interface with an
// empty one (docs/verification.md "Serving cards"). An interface of another
// protocol (an MCP endpoint), or without a URL or binding, is left out. One
// without a protocol version is given the card's, when no interface of the
// card declares one (the version Cardex normalised the card to: its
// declared protocolVersion, else its shape's); otherwise it is left out.
func a2aInterfaces(c *Card) []AgentInterface {
	out := make([]AgentInterface, 0, len(c.Interfaces))
	declared := false
	for _, it := range c.Interfaces {
		if it.IsA2A() && it.ProtocolVersion != "" {
			declared = true
		}
	}
	fallback := ""
	if !declared && len(c.ProtocolVersions) > 0 {
		fallback = c.ProtocolVersions[0]
	}
	for _, it := range c.Interfaces {
		if it.URL == "" || it.Binding == "" || !it.IsA2A() {
			continue
		}
		pv := it.ProtocolVersion
		if pv == "" {
			pv = fallback
		}
		if pv == "" {
			continue
		}
		out = append(out, AgentInterface{URL: it.URL, ProtocolBinding: it.Binding, Tenant: it.Tenant, ProtocolVersion: pv})
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func a2aRequirements(reqs []SecurityRequirement) []A2ARequirement {
	if len(reqs) == 0 {
		return nil
	}
	out := make([]A2ARequirement, 0, len(reqs))
	for _, r := range reqs {
		m := make(map[string]ScopeList, len(r.Schemes))
		for name, scopes := range r.Schemes {
			m[name] = ScopeList{List: slices.Clone(scopes)}
		}
		out = append(out, A2ARequirement{Schemes: m})
	}
	return out
}

func a2aScheme(s SecurityScheme) (A2AScheme, bool) {
	switch s.Kind {
	case SchemeAPIKey:
		return A2AScheme{APIKey: &A2AAPIKeyScheme{Description: s.Description, Location: s.Location, Name: s.ParamName}}, true
	case SchemeHTTP:
		return A2AScheme{HTTPAuth: &A2AHTTPAuthScheme{Description: s.Description, Scheme: s.Scheme, BearerFormat: s.BearerFormat}}, true
	case SchemeOpenIDConnect:
		return A2AScheme{OpenIDConnect: &A2AOpenIDConnectScheme{Description: s.Description, OpenIDConnectURL: s.OpenIDConnectURL}}, true
	case SchemeMutualTLS:
		return A2AScheme{MutualTLS: &A2AMutualTLSScheme{Description: s.Description}}, true
	case SchemeOAuth2:
		o := &A2AOAuth2Scheme{Description: s.Description, OAuth2MetadataURL: s.OAuth2MetadataURL}
		if len(s.Flows) > 0 {
			f := s.Flows[0]
			scopes := f.Scopes
			if scopes == nil {
				scopes = map[string]string{}
			}
			flow := &A2AFlow{AuthorizationURL: f.AuthorizationURL, DeviceAuthorizationURL: f.DeviceAuthorizationURL,
				TokenURL: f.TokenURL, RefreshURL: f.RefreshURL, Scopes: scopes, PKCERequired: f.PKCERequired}
			switch f.Kind {
			case "authorizationCode":
				o.Flows.AuthorizationCode = flow
			case "clientCredentials":
				o.Flows.ClientCredentials = flow
			case "implicit":
				o.Flows.Implicit = flow
			case "password":
				o.Flows.Password = flow
			case "deviceCode":
				o.Flows.DeviceCode = flow
			}
		}
		return A2AScheme{OAuth2: o}, true
	}
	return A2AScheme{}, false
}
