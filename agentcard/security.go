package agentcard

import (
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// wrapperKinds maps the v1 oneof wrapper keys to scheme kinds.
var wrapperKinds = map[string]string{
	"apiKeySecurityScheme":        SchemeAPIKey,
	"httpAuthSecurityScheme":      SchemeHTTP,
	"oauth2SecurityScheme":        SchemeOAuth2,
	"openIdConnectSecurityScheme": SchemeOpenIDConnect,
	"mtlsSecurityScheme":          SchemeMutualTLS,
}

// typeKinds maps the v0.2/v0.3 `type` values (compared case-insensitively).
var typeKinds = map[string]string{
	"apikey": SchemeAPIKey, "http": SchemeHTTP, "oauth2": SchemeOAuth2,
	"openidconnect": SchemeOpenIDConnect, "mutualtls": SchemeMutualTLS,
}

// securitySchemes reads `securitySchemes` in both forms (docs/cards.md,
// §1.3), in document order. A hybrid entry carrying both the wrapper and
// `type` is read from the wrapper (the v1 member). Without securitySchemes,
// a v0.1 `authentication` is mapped loosely (see authSchemes).
func (n *normalizer) securitySchemes(top obj) []SecurityScheme {
	out := []SecurityScheme{}
	n.schemes = map[string]bool{}
	v, ptr := top.get("securitySchemes")
	if v == nil {
		return n.authSchemes(top)
	}
	if len(v.Object) > MaxSecuritySchemes {
		n.c.warn(ptr, CodeTooMany, "%d security schemes, more than the %d allowed", len(v.Object), MaxSecuritySchemes)
	}
	for _, m := range v.Object {
		mp := ptr + "/" + sj.EscapePointerToken(m.Key)
		if m.Value.Kind != sj.Object {
			n.c.warn(mp, CodeWrongType, "security scheme %q must be an object, not %s; ignored", m.Key, m.Value.Kind)
			continue
		}
		n.schemes[m.Key] = true
		out = append(out, n.scheme(m.Key, m.Value, mp))
	}
	return out
}

func (n *normalizer) scheme(name string, v *sj.Value, ptr string) SecurityScheme {
	o := n.c.open(v, ptr, schemeSchema)
	s := SecurityScheme{Name: name}
	// The wrapper actually used: the first in document order.
	var wrapKey string
	for _, m := range v.Object {
		i, ok := schemeSchema.lookup(m.Key)
		if !ok {
			continue
		}
		canon := schemeSchema.fields[i].name
		if _, isWrap := wrapperKinds[canon]; !isWrap || o.vals[i] == nil {
			continue
		}
		if wrapKey != "" {
			n.c.warn(ptr+"/"+sj.EscapePointerToken(m.Key), CodeAmbiguousScheme, "a security scheme holds exactly one of the wrapper members; %q is used", wrapKey)
			continue
		}
		wrapKey = canon
	}
	if wrapKey != "" {
		s.Kind = wrapperKinds[wrapKey]
		wv, wp := o.get(wrapKey)
		w := n.c.open(wv, wp, wrappedSchemeSchema)
		n.schemeFields(&s, w, "location")
		if s.Description == "" {
			s.Description = o.str("description")
		}
		return s
	}
	tv, tp := o.get("type")
	if tv == nil {
		n.c.warn(ptr, CodeUnknownScheme, "security scheme %q has neither a type nor a v1 wrapper member", name)
		n.schemeFields(&s, o, "in")
		return s
	}
	s.Kind = typeKinds[strings.ToLower(tv.String)]
	if s.Kind == "" {
		n.c.warn(tp, CodeUnknownScheme, "unknown security scheme type %q", tv.String)
	}
	n.schemeFields(&s, o, "in")
	return s
}

// schemeFields copies the details of one scheme; locKey is "location" (v1)
// or "in" (v0.x). REQUIRED members of the kind are warned about.
func (n *normalizer) schemeFields(s *SecurityScheme, o obj, locKey string) {
	s.Description = o.str("description")
	switch s.Kind {
	case SchemeAPIKey:
		s.Location = o.str(locKey)
		s.ParamName = o.str("name")
		n.requireText(o, locKey)
		n.requireText(o, "name")
	case SchemeHTTP:
		s.Scheme = o.str("scheme")
		s.BearerFormat = o.str("bearerFormat")
		n.requireText(o, "scheme")
	case SchemeOAuth2:
		s.OAuth2MetadataURL = n.optionalURL(o, "oauth2MetadataUrl")
		fv, fp := o.get("flows")
		if fv == nil {
			n.c.warn(fp, CodeMissingRequired, "flows is required")
			return
		}
		s.Flows = n.flows(fv, fp)
	case SchemeOpenIDConnect:
		n.requireText(o, "openIdConnectUrl")
		s.OpenIDConnectURL = n.optionalURL(o, "openIdConnectUrl")
	}
}

// flows keeps every flow written: v0.x cards may list several, v1's oneof
// has one; converting to exactly one would lose data (docs/cards.md).
func (n *normalizer) flows(v *sj.Value, ptr string) []OAuthFlow {
	fo := n.c.open(v, ptr, flowsSchema)
	out := []OAuthFlow{}
	for _, m := range v.Object {
		i, ok := flowsSchema.lookup(m.Key)
		if !ok || fo.vals[i] == nil {
			continue
		}
		kind := flowsSchema.fields[i].name
		fp := ptr + "/" + sj.EscapePointerToken(m.Key)
		o := n.c.open(m.Value, fp, flowSchema)
		f := OAuthFlow{
			Kind:                   kind,
			AuthorizationURL:       n.optionalURL(o, "authorizationUrl"),
			TokenURL:               n.optionalURL(o, "tokenUrl"),
			RefreshURL:             n.optionalURL(o, "refreshUrl"),
			DeviceAuthorizationURL: n.optionalURL(o, "deviceAuthorizationUrl"),
			PKCERequired:           o.boolean("pkceRequired"),
		}
		if sv, sp := o.get("scopes"); sv != nil && len(sv.Object) > 0 {
			f.Scopes = make(map[string]string, len(sv.Object))
			for _, sm := range sv.Object {
				if sm.Value.Kind != sj.String {
					n.c.warn(sp+"/"+sj.EscapePointerToken(sm.Key), CodeWrongType, "scope description must be a string, not %s; ignored", sm.Value.Kind)
					continue
				}
				f.Scopes[sm.Key] = sm.Value.String
			}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		n.c.warn(ptr, CodeEmptyRequired, "flows names no OAuth flow")
	}
	return out
}

// legacyAuthKinds maps the free-form v0.1 `authentication.schemes` names.
// v0.1 gave no structure (only names and an opaque `credentials`), so the
// mapping is loose: "bearer" is HTTP Bearer, "basic" HTTP Basic, and the
// names of the OpenAPI types are those types.
var legacyAuthKinds = map[string][2]string{
	"bearer": {SchemeHTTP, "Bearer"}, "basic": {SchemeHTTP, "Basic"}, "digest": {SchemeHTTP, "Digest"},
	"oauth2": {SchemeOAuth2, ""}, "oauth": {SchemeOAuth2, ""},
	"openidconnect": {SchemeOpenIDConnect, ""}, "oidc": {SchemeOpenIDConnect, ""},
	"apikey": {SchemeAPIKey, ""}, "api_key": {SchemeAPIKey, ""}, "api-key": {SchemeAPIKey, ""},
	"mtls": {SchemeMutualTLS, ""}, "mutualtls": {SchemeMutualTLS, ""},
}

// authSchemes maps v0.1 `authentication.schemes` to schemes named as
// written. `credentials` is not copied into the model: it may hold a secret
// and stays only in the raw card.
func (n *normalizer) authSchemes(top obj) []SecurityScheme {
	out := []SecurityScheme{}
	v, ptr := top.get("authentication")
	if v == nil {
		return out
	}
	n.c.warn(ptr, CodeLegacyAuth, "v0.1 authentication is superseded by securitySchemes; its scheme names are mapped loosely and credentials are not interpreted")
	o := n.c.open(v, ptr, authSchema)
	sv, sp := o.get("schemes")
	if sv == nil {
		return out
	}
	for i, e := range sv.Array {
		name := e.String
		if name == "" || n.schemes[name] || noAuth(name) {
			continue
		}
		n.schemes[name] = true
		s := SecurityScheme{Name: name}
		if k, ok := legacyAuthKinds[strings.ToLower(strings.TrimSpace(name))]; ok {
			s.Kind, s.Scheme = k[0], k[1]
		} else {
			n.c.warn(itemPtr(sp, i), CodeUnknownScheme, "unknown v0.1 authentication scheme %q", name)
		}
		out = append(out, s)
	}
	return out
}

// noAuth reports whether a v0.1 authentication scheme name says "no
// authentication" (`"schemes": ["none"]`): it is no scheme and no
// requirement, or the agent would look protected.
func noAuth(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "none", "anonymous", "noauth", "no-auth":
		return true
	}
	return false
}
