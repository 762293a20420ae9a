package web

import (
	"slices"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
)

// schemeView is one security scheme in plain words, for someone who has to
// connect to the agent ("API key in header X-API-Key").
type schemeView struct {
	Name        string
	Summary     string
	Description string
	Links       []namedURL // token, authorization, discovery URLs
}

type namedURL struct{ Label, URL string }

var flowWords = map[string]string{
	"authorizationCode": "authorization code",
	"clientCredentials": "client credentials",
	"implicit":          "implicit",
	"password":          "password",
	"deviceCode":        "device code",
}

var locationWords = map[string]string{"header": "header", "query": "query parameter", "cookie": "cookie"}

func describeScheme(s agentcard.SecurityScheme) schemeView {
	v := schemeView{Name: s.Name, Description: s.Description}
	switch s.Kind {
	case agentcard.SchemeAPIKey:
		where := locationWords[s.Location]
		if where == "" {
			where = "request"
		}
		v.Summary = "API key in " + where
		if s.ParamName != "" {
			v.Summary += " " + s.ParamName
		}
	case agentcard.SchemeHTTP:
		switch strings.ToLower(s.Scheme) {
		case "bearer":
			v.Summary = "HTTP bearer token"
			if s.BearerFormat != "" {
				v.Summary += " (" + s.BearerFormat + ")"
			}
		case "basic":
			v.Summary = "HTTP basic authentication (user name and password)"
		default:
			v.Summary = "HTTP authentication, scheme " + s.Scheme
		}
	case agentcard.SchemeOAuth2:
		var flows []string
		for _, f := range s.Flows {
			w := "OAuth 2.0 " + or(flowWords[f.Kind], f.Kind)
			if len(f.Scopes) > 0 {
				w += ", scopes: " + strings.Join(sortedKeys(f.Scopes), ", ")
			}
			flows = append(flows, w)
			for _, l := range []namedURL{{"authorization", f.AuthorizationURL}, {"token", f.TokenURL},
				{"refresh", f.RefreshURL}, {"device authorization", f.DeviceAuthorizationURL}} {
				if l.URL != "" {
					v.Links = append(v.Links, namedURL{or(flowWords[f.Kind], f.Kind) + " " + l.Label + " URL", l.URL})
				}
			}
		}
		if len(flows) == 0 {
			flows = []string{"OAuth 2.0"}
		}
		v.Summary = strings.Join(flows, "; ")
		if s.OAuth2MetadataURL != "" {
			v.Links = append(v.Links, namedURL{"OAuth 2.0 metadata", s.OAuth2MetadataURL})
		}
	case agentcard.SchemeOpenIDConnect:
		v.Summary = "OpenID Connect"
		if s.OpenIDConnectURL != "" {
			v.Links = append(v.Links, namedURL{"discovery document", s.OpenIDConnectURL})
		}
	case agentcard.SchemeMutualTLS:
		v.Summary = "Mutual TLS: a client certificate"
	default:
		v.Summary = "A scheme Cardex does not recognize"
	}
	return v
}

// describeRequirements says which schemes a caller needs: each requirement
// is an alternative; the schemes within one are needed together.
func describeRequirements(reqs []agentcard.SecurityRequirement) []string {
	var out []string
	for _, r := range reqs {
		var parts []string
		for _, name := range sortedKeys(r.Schemes) {
			p := name
			if sc := r.Schemes[name]; len(sc) > 0 {
				p += " (scopes: " + strings.Join(sc, ", ") + ")"
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			out = append(out, "no authentication")
			continue
		}
		out = append(out, strings.Join(parts, " and "))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var keySourceWords = map[string]string{
	"pinned":     "a key an admin pinned for this agent",
	"jku":        "the key set named by jku, on the agent's origin",
	"well-known": "the origin's /.well-known/jwks.json",
	"none":       "no trusted source",
	"":           "no trusted source",
}

// profileWords name each canonical form and what a signature under it
// covers (docs/verification.md).
var profileWords = map[string]string{
	"spec":          "A2A specification (RFC 8785 of the card without signatures)",
	"spec-v1-only":  "A2A v1 members only (members outside the v1 schema are not signed)",
	"sdk":           "SDK form (the v1 members; empty values are not signed)",
	"python-legacy": "legacy Python SDK form (the v1 members; empty values are not signed)",
	"raw":           "the bytes as served",
}

var changeWords = map[string]string{
	agentcard.ChangeSkillAdded: "Skill added", agentcard.ChangeSkillRemoved: "Skill removed",
	agentcard.ChangeSkillChanged: "Skill changed", agentcard.ChangeInterfaceAdded: "Interface added",
	agentcard.ChangeInterfaceRemoved: "Interface removed", agentcard.ChangeSecurity: "Security changed",
	agentcard.ChangeCapability: "Capability changed", agentcard.ChangeProvider: "Provider changed",
	agentcard.ChangeVersion: "Version changed", agentcard.ChangeKey: "Signing key changed",
	agentcard.ChangeName: "Name changed", agentcard.ChangeDescription: "Description changed",
	agentcard.ChangeLink: "Link changed", agentcard.ChangeModes: "Modes changed",
}
