package agentcard

import (
	sj "github.com/cardexhq/cardex/strictjson"
)

// cardRequirements reads the card's requirements: v1 `securityRequirements`
// wins over v0.3 `security`. A v0.1 card's `authentication.schemes` become
// one alternative per scheme, since v0.1 listed the schemes a client may use.
func (n *normalizer) cardRequirements(top obj) []SecurityRequirement {
	if v, p := top.get("securityRequirements"); v != nil {
		return n.requirements(v, p)
	}
	if v, p := top.get("security"); v != nil {
		return n.requirements(v, p)
	}
	out := []SecurityRequirement{}
	if top.has("securitySchemes") {
		return out
	}
	if a, _ := top.get("authentication"); a != nil {
		if sv := a.Get("schemes"); sv != nil && sv.Kind == sj.Array {
			seen := map[string]bool{}
			for _, e := range sv.Array {
				if e.Kind == sj.String && e.String != "" && !seen[e.String] && !noAuth(e.String) {
					seen[e.String] = true
					out = append(out, SecurityRequirement{Schemes: map[string][]string{e.String: {}}})
				}
			}
		}
	}
	return out
}

// requirements reads an array of requirements in any of the three forms:
// ProtoJSON `{"schemes":{"x":{"list":[…]}}}`, a2a-go's bare arrays
// `{"schemes":{"x":[…]}}` (a2a-go#430) and v0.3/OpenAPI `{"x":[…]}`.
// An element whose `schemes` member is an object is of the first two
// forms; a v0.3 scheme literally named "schemes" has an array there.
func (n *normalizer) requirements(v *sj.Value, ptr string) []SecurityRequirement {
	out := make([]SecurityRequirement, 0, len(v.Array))
	for i, e := range v.Array {
		if e.Kind != sj.Object {
			continue // warned by open as wrong-type
		}
		ep := itemPtr(ptr, i)
		req := SecurityRequirement{Schemes: map[string][]string{}}
		members, mptr := e, ep
		if s := e.Get("schemes"); s != nil && s.Kind == sj.Object {
			o := n.c.open(e, ep, requirementSchema)
			members, mptr = o.get("schemes")
			if members == nil {
				continue
			}
		}
		for _, m := range members.Object {
			sp := mptr + "/" + sj.EscapePointerToken(m.Key)
			scopes, ok := n.scopes(m.Value, sp)
			if !ok {
				continue
			}
			if !n.schemes[m.Key] {
				n.c.warn(sp, CodeUndefinedScheme, "security scheme %q is not defined in securitySchemes", m.Key)
			}
			req.Schemes[m.Key] = scopes
		}
		out = append(out, req)
	}
	return out
}

// scopes reads one scope list, `{"list":[…]}` (`{}` when empty, as
// ProtoJSON writes it) or a bare array.
func (n *normalizer) scopes(v *sj.Value, ptr string) ([]string, bool) {
	switch v.Kind {
	case sj.Object:
		o := n.c.open(v, ptr, scopeListSchema)
		return o.strings("list"), true
	case sj.Array:
		out := make([]string, 0, len(v.Array))
		for i, e := range v.Array {
			if e.Kind != sj.String {
				n.c.warn(itemPtr(ptr, i), CodeWrongType, "scope must be a string, not %s; ignored", e.Kind)
				continue
			}
			out = append(out, e.String)
		}
		return out, true
	case sj.Null:
		n.c.warn(ptr, CodeNullValue, "scope list is null; read as empty")
		return []string{}, true
	}
	// The scheme stays required: reading it as unscoped never makes a
	// protected agent look open.
	n.c.warn(ptr, CodeWrongType, "scopes must be an array or {\"list\": [...]}, not %s; read as no scopes", v.Kind)
	return []string{}, true
}
