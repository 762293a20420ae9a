package agentcard

import (
	"maps"
	"slices"

	sj "github.com/cardexhq/cardex/strictjson"
)

// diffSecurity reports schemes removed, changed and added (by name), then
// the card-level requirements as one value when they differ.
func diffSecurity(d []Change, old, new *Card) []Change {
	path := func(name string) string { return "/securitySchemes/" + sj.EscapePointerToken(name) }
	for _, s := range old.SecuritySchemes {
		if findScheme(new.SecuritySchemes, s.Name) == nil {
			d = append(d, Change{Kind: ChangeSecurity, Path: path(s.Name), Old: s, New: nil})
		}
	}
	for _, s := range new.SecuritySchemes {
		prev := findScheme(old.SecuritySchemes, s.Name)
		switch {
		case prev == nil:
			d = append(d, Change{Kind: ChangeSecurity, Path: path(s.Name), Old: nil, New: s})
		case !schemeEqual(prev, &s):
			d = append(d, Change{Kind: ChangeSecurity, Path: path(s.Name), Old: *prev, New: s})
		}
	}
	if !requirementsEqual(old.SecurityRequirements, new.SecurityRequirements) {
		d = append(d, Change{Kind: ChangeSecurity, Path: "/securityRequirements",
			Old: old.SecurityRequirements, New: new.SecurityRequirements})
	}
	return d
}

func findScheme(list []SecurityScheme, name string) *SecurityScheme {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

func schemeEqual(a, b *SecurityScheme) bool {
	if a.Name != b.Name || a.Kind != b.Kind || a.Description != b.Description || a.Location != b.Location ||
		a.ParamName != b.ParamName || a.Scheme != b.Scheme || a.BearerFormat != b.BearerFormat ||
		a.OpenIDConnectURL != b.OpenIDConnectURL || a.OAuth2MetadataURL != b.OAuth2MetadataURL {
		return false
	}
	return slices.EqualFunc(a.Flows, b.Flows, func(x, y OAuthFlow) bool {
		return x.Kind == y.Kind && x.AuthorizationURL == y.AuthorizationURL && x.TokenURL == y.TokenURL &&
			x.RefreshURL == y.RefreshURL && x.DeviceAuthorizationURL == y.DeviceAuthorizationURL &&
			maps.Equal(x.Scopes, y.Scopes)
	})
}

func requirementsEqual(a, b []SecurityRequirement) bool {
	return slices.EqualFunc(a, b, func(x, y SecurityRequirement) bool {
		return maps.EqualFunc(x.Schemes, y.Schemes, func(p, q []string) bool { return slices.Equal(p, q) })
	})
}
