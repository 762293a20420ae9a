package discover

import (
	"encoding/json"

	"github.com/cardexhq/cardex/agentcard"
)

// specCard renders a normalized card under the A2A v1.0 AgentCard member
// names (supportedInterfaces, oneof-wrapped security schemes, requirement
// lists), whatever version the agent published: discovery clients get one
// shape to connect with, and Cardex's own record keeps the normalized form.
func specCard(c *agentcard.Card) map[string]any {
	out := map[string]any{
		"name":                c.Name,
		"description":         c.Description,
		"version":             c.Version,
		"supportedInterfaces": interfaces(c.Interfaces),
		"capabilities":        capabilities(c.Capabilities),
		"defaultInputModes":   nonNil(c.DefaultInputModes),
		"defaultOutputModes":  nonNil(c.DefaultOutputModes),
		"skills":              skills(c.Skills),
	}
	if c.Provider != nil {
		out["provider"] = map[string]any{"organization": c.Provider.Organization, "url": c.Provider.URL}
	}
	if c.DocumentationURL != "" {
		out["documentationUrl"] = c.DocumentationURL
	}
	if c.IconURL != "" {
		out["iconUrl"] = c.IconURL
	}
	if len(c.SecuritySchemes) > 0 {
		out["securitySchemes"] = schemes(c.SecuritySchemes)
	}
	if len(c.SecurityRequirements) > 0 {
		out["securityRequirements"] = requirements(c.SecurityRequirements)
	}
	return out
}

func interfaces(in []agentcard.Interface) []any {
	out := make([]any, 0, len(in))
	for _, i := range in {
		m := map[string]any{"url": i.URL, "protocolBinding": i.Binding, "protocolVersion": i.ProtocolVersion}
		if i.Tenant != "" {
			m["tenant"] = i.Tenant
		}
		out = append(out, m)
	}
	return out
}

func capabilities(c agentcard.Capabilities) map[string]any {
	out := map[string]any{"streaming": c.Streaming, "pushNotifications": c.PushNotifications,
		"extendedAgentCard": c.ExtendedAgentCard}
	if len(c.Extensions) > 0 {
		exts := make([]any, 0, len(c.Extensions))
		for _, e := range c.Extensions {
			m := map[string]any{"uri": e.URI, "required": e.Required}
			if e.Description != "" {
				m["description"] = e.Description
			}
			var params any
			if len(e.Params) > 0 && json.Unmarshal(e.Params, &params) == nil {
				m["params"] = params
			}
			exts = append(exts, m)
		}
		out["extensions"] = exts
	}
	return out
}

func schemes(in []agentcard.SecurityScheme) map[string]any {
	out := make(map[string]any, len(in))
	for _, s := range in {
		body := map[string]any{}
		if s.Description != "" {
			body["description"] = s.Description
		}
		var kind string
		switch s.Kind {
		case agentcard.SchemeAPIKey:
			kind = "apiKeySecurityScheme"
			body["location"], body["name"] = s.Location, s.ParamName
		case agentcard.SchemeHTTP:
			kind = "httpAuthSecurityScheme"
			body["scheme"] = s.Scheme
			if s.BearerFormat != "" {
				body["bearerFormat"] = s.BearerFormat
			}
		case agentcard.SchemeOAuth2:
			kind = "oauth2SecurityScheme"
			flows := map[string]any{}
			for _, f := range s.Flows {
				fm := map[string]any{"scopes": nonNilMap(f.Scopes)}
				for k, v := range map[string]string{"authorizationUrl": f.AuthorizationURL, "tokenUrl": f.TokenURL,
					"refreshUrl": f.RefreshURL, "deviceAuthorizationUrl": f.DeviceAuthorizationURL} {
					if v != "" {
						fm[k] = v
					}
				}
				flows[f.Kind] = fm
			}
			body["flows"] = flows
			if s.OAuth2MetadataURL != "" {
				body["oauth2MetadataUrl"] = s.OAuth2MetadataURL
			}
		case agentcard.SchemeOpenIDConnect:
			kind = "openIdConnectSecurityScheme"
			body["openIdConnectUrl"] = s.OpenIDConnectURL
		case agentcard.SchemeMutualTLS:
			kind = "mtlsSecurityScheme"
		default:
			continue // a scheme the parser did not recognize has no v1.0 form
		}
		out[s.Name] = map[string]any{kind: body}
	}
	return out
}

func requirements(in []agentcard.SecurityRequirement) []any {
	out := make([]any, 0, len(in))
	for _, r := range in {
		sch := make(map[string]any, len(r.Schemes))
		for name, scopes := range r.Schemes {
			sch[name] = map[string]any{"list": nonNil(scopes)}
		}
		out = append(out, map[string]any{"schemes": sch})
	}
	return out
}

func skills(in []agentcard.Skill) []any {
	out := make([]any, 0, len(in))
	for _, s := range in {
		m := map[string]any{"id": s.ID, "name": s.Name, "description": s.Description, "tags": nonNil(s.Tags)}
		if len(s.Examples) > 0 {
			m["examples"] = s.Examples
		}
		if len(s.InputModes) > 0 {
			m["inputModes"] = s.InputModes
		}
		if len(s.OutputModes) > 0 {
			m["outputModes"] = s.OutputModes
		}
		if len(s.SecurityRequirements) > 0 {
			m["securityRequirements"] = requirements(s.SecurityRequirements)
		}
		out = append(out, m)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
