package agentcard

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// Coverage says how far the content a signature covers reaches into a card
// (docs/verification.md). A signature profile may sign fewer members than
// the card holds: the spec-v1-only and sdk profiles sign only the members of
// the v1 schema, so the v0.3 rendering of a hybrid card, vendor keys and
// misspelled members ride along unsigned. Cardex's view of a verified card
// is what its signature covers (SignedView): the uncovered members are
// listed and ignored. Whether they agree with the signed members decides
// only whether the agent's own v0.3 bytes may be served to v0.3 clients
// as they are.
type Coverage struct {
	// Uncovered are the JSON pointers of every member Cardex or a client
	// reads that the signature does not cover, in document order: what
	// the agent page and the API list as "not covered by the signature,
	// ignored".
	Uncovered []string `json:"uncovered,omitempty"`
	// Disagreeing are those of Uncovered that state something the signed
	// members do not (another endpoint, provider, scheme, requirement,
	// capability…).
	Disagreeing []string `json:"disagreeing,omitempty"`
	// Unsigned are those of Uncovered that agree with the signed members
	// (the v0.3 rendering of a legitimate hybrid card).
	Unsigned []string `json:"unsigned,omitempty"`
}

// Covered reports whether no unsigned member disagrees with the signed ones:
// the whole document restates what was signed.
func (c Coverage) Covered() bool { return len(c.Disagreeing) == 0 }

// maxCoveragePointers bounds the pointers one coverage check collects, so a
// hostile card with thousands of unsigned members cannot produce a verdict of the same size. The decision does not depend
// on the bound: a disagreement is found from the normalized cards.
const maxCoveragePointers = 32

// CheckCoverage compares full, the strict tree of a received card, with
// signed, the tree a signature profile signed: full with members left out
// and nothing changed or added (the projection before serialization). It
// lists the members of full that Cardex reads but signed lacks, and decides
// for each whether it agrees with the signed members:
//
//   - the normalized Card of full and that of signed must be equal in every
//     member (name, description, version, interfaces and protocol versions,
//     provider, documentation and icon URLs, capabilities, security schemes
//     and requirements, media types, skills), so the view Cardex stores,
//     indexes and serves from the whole card is the view of the signed
//     members;
//   - the v0.3 rendering of a hybrid card, which the Card does not read when
//     v1 members are present but a v0.3 client does, must restate the signed
//     members: each endpoint of url, preferredTransport and
//     additionalInterfaces (with the card's protocolVersion) is a signed
//     interface with the same URL, binding and protocol version; each
//     `type`-form security scheme is the signed scheme of that name; the v0.3
//     `security` lists of the card and of each skill are the signed
//     requirements.
//
// Members Cardex never reads (vendor keys) and members holding only a
// default ("", false, null, [] or {}) are not listed: they carry nothing a
// reader acts on.
func CheckCoverage(full, signed *sj.Value) Coverage {
	if full == nil || full.Kind != sj.Object || signed == nil || signed.Kind != sj.Object {
		return Coverage{}
	}
	w := &unsignedWalk{}
	w.object(full, signed, "", cardSchema, true)
	if len(w.found) == 0 {
		return Coverage{}
	}
	cf := (&normalizer{}).card(full)
	cs := (&normalizer{}).card(signed)
	failing := map[string]bool{} // top-level member names whose unsigned parts disagree
	fail := func(names ...string) {
		for _, n := range names {
			failing[n] = true
		}
	}
	if cf.Name != cs.Name {
		fail("name")
	}
	if cf.Description != cs.Description {
		fail("description")
	}
	if cf.Version != cs.Version {
		fail("version")
	}
	if !reflect.DeepEqual(cf.Interfaces, cs.Interfaces) || !reflect.DeepEqual(cf.ProtocolVersions, cs.ProtocolVersions) {
		fail(interfaceMembers...)
	}
	if !reflect.DeepEqual(cf.Provider, cs.Provider) {
		fail("provider")
	}
	if cf.DocumentationURL != cs.DocumentationURL {
		fail("documentationUrl")
	}
	if cf.IconURL != cs.IconURL {
		fail("iconUrl")
	}
	if !reflect.DeepEqual(cf.Capabilities, cs.Capabilities) {
		fail("capabilities", "supportsAuthenticatedExtendedCard")
	}
	if !reflect.DeepEqual(cf.SecuritySchemes, cs.SecuritySchemes) {
		fail("securitySchemes", "authentication")
	}
	if !reflect.DeepEqual(cf.SecurityRequirements, cs.SecurityRequirements) {
		fail("securityRequirements", "security", "authentication")
	}
	if !reflect.DeepEqual(cf.DefaultInputModes, cs.DefaultInputModes) {
		fail("defaultInputModes")
	}
	if !reflect.DeepEqual(cf.DefaultOutputModes, cs.DefaultOutputModes) {
		fail("defaultOutputModes")
	}
	if !reflect.DeepEqual(cf.Skills, cs.Skills) {
		fail("skills")
	}

	// The v0.3 rendering: what a v0.3 client of this card reads. The
	// checks run on what the walk saw, bounded or not, so a pointer past
	// the bound cannot hide a disagreement.
	badScheme := map[string]bool{}
	badSkill := map[int]bool{}
	if w.tops["url"] || w.tops["preferredTransport"] || w.tops["additionalInterfaces"] || w.tops["protocolVersion"] ||
		w.tops["security"] || w.legacySchemes || w.legacySkills {
		cl := (&normalizer{}).card(legacyView(full))
		if !legacyInterfacesSigned(cl.Interfaces, cs.Interfaces) {
			fail("url", "preferredTransport", "additionalInterfaces", "protocolVersion")
		}
		if w.tops["security"] && !sameRequirements(cl.SecurityRequirements, cs.SecurityRequirements) {
			fail("security")
		}
		if w.legacySchemes {
			for _, m := range memberOf(full, "securitySchemes").Object {
				if hasTypeForm(m.Value) && !sameScheme(cl.SecuritySchemes, cs.SecuritySchemes, m.Key) {
					badScheme[m.Key] = true
				}
			}
		}
		if w.legacySkills {
			for i, sk := range memberOf(full, "skills").Array {
				if v := memberOf(sk, "security"); v != nil && !trivial(v) && !sameSkillSecurity(cl.Skills, cs.Skills, i) {
					badSkill[i] = true
				}
			}
		}
	}
	// provider.name is read only in place of a missing organization (then
	// the Card comparison decides); beside one it must agree.
	badProviderName := false
	if pn := memberOf(memberOf(full, "provider"), "name"); pn != nil && pn.Kind == sj.String && pn.String != "" &&
		cs.Provider != nil && cs.Provider.Organization != "" && pn.String != cs.Provider.Organization &&
		memberOf(memberOf(signed, "provider"), "name") == nil {
		badProviderName = true
	}

	var cov Coverage
	named := map[string]bool{}
	for _, u := range w.found {
		bad := failing[u.top]
		switch {
		case u.top == "securitySchemes" && len(u.tokens) >= 3:
			bad = bad || badScheme[u.tokens[1]]
		case u.top == "skills" && len(u.tokens) >= 3 && skillLegacySecurity(u.tokens[2]):
			i, _ := strconv.Atoi(u.tokens[1])
			bad = bad || badSkill[i]
		case u.top == "provider" && len(u.tokens) == 2 && u.tokens[1] == "name":
			bad = bad || badProviderName
		}
		cov.Uncovered = append(cov.Uncovered, u.ptr)
		if bad {
			cov.Disagreeing = append(cov.Disagreeing, u.ptr)
			named[u.top] = true
		} else {
			cov.Unsigned = append(cov.Unsigned, u.ptr)
		}
	}
	// A disagreement whose members lie past the bound is named by its
	// top-level member.
	if len(badScheme) > 0 {
		failing["securitySchemes"] = true
	}
	if len(badSkill) > 0 {
		failing["skills"] = true
	}
	for _, m := range full.Object {
		if name, ok := topName(m.Key); ok && failing[name] && !named[name] && w.tops[name] {
			cov.Disagreeing = append(cov.Disagreeing, memberPtr("", m.Key))
			if !slices.Contains(cov.Uncovered, memberPtr("", m.Key)) {
				cov.Uncovered = append(cov.Uncovered, memberPtr("", m.Key))
			}
		}
	}
	return cov
}

// interfaceMembers are the top-level members that make the card's endpoints.
var interfaceMembers = []string{"supportedInterfaces", "url", "preferredTransport", "additionalInterfaces", "protocolVersion"}

// unsigned is one member of the full card outside the signed content.
type unsigned struct {
	ptr    string
	top    string   // the camelCase name of its top-level member
	tokens []string // the pointer's tokens, unescaped, top-level first
}

// unsignedWalk collects the members Cardex reads that full has and signed
// lacks, in document order.
type unsignedWalk struct {
	found []unsigned      // bounded by maxCoveragePointers
	tops  map[string]bool // top-level members with an unsigned part, unbounded
	// legacySchemes: a security scheme has an unsigned member (its v0.3
	// form); legacySkills: a skill has an unsigned v0.3 `security`.
	legacySchemes, legacySkills bool
}

func (w *unsignedWalk) add(ptr string) {
	tokens := pointerTokens(ptr)
	top, _ := topName(tokens[0])
	if w.tops == nil {
		w.tops = map[string]bool{}
	}
	w.tops[top] = true
	switch {
	case top == "securitySchemes" && len(tokens) >= 3:
		w.legacySchemes = true
	case top == "skills" && len(tokens) >= 3 && skillLegacySecurity(tokens[2]):
		w.legacySkills = true
	}
	if len(w.found) < maxCoveragePointers {
		w.found = append(w.found, unsigned{ptr: ptr, top: top, tokens: tokens})
	}
}

func skillLegacySecurity(key string) bool {
	i, ok := skillSchema.lookup(key)
	return ok && skillSchema.fields[i].name == "security"
}

// topName is the camelCase name of a top-level member key, false for a
// member Cardex does not read.
func topName(key string) (string, bool) {
	i, ok := cardSchema.lookup(key)
	if !ok {
		return "", false
	}
	return cardSchema.fields[i].name, true
}

// child is the schema of a member's value: of the object itself, of each
// element of an array, or (each) of each member of a map.
type child struct {
	s     *schema
	mapOf bool
}

// childSchemas says which members of each level are themselves read
// against a schema; a member absent here but known to its level is read
// as a whole (a free-form value such as extension params or scope lists:
// every key in it counts).
var childSchemas = map[*schema]map[string]child{
	cardSchema: {
		"supportedInterfaces": {s: interfaceSchema}, "additionalInterfaces": {s: legacyIfSchema},
		"provider": {s: providerSchema}, "capabilities": {s: capabilitiesSchema}, "skills": {s: skillSchema},
		"securitySchemes": {s: schemeSchema, mapOf: true}, "authentication": {s: authSchema},
	},
	capabilitiesSchema: {"extensions": {s: extensionSchema}},
	schemeSchema: {
		"apiKeySecurityScheme": {s: wrappedSchemeSchema}, "httpAuthSecurityScheme": {s: wrappedSchemeSchema},
		"oauth2SecurityScheme": {s: wrappedSchemeSchema}, "openIdConnectSecurityScheme": {s: wrappedSchemeSchema},
		"mtlsSecurityScheme": {s: wrappedSchemeSchema}, "flows": {s: flowsSchema},
	},
	wrappedSchemeSchema: {"flows": {s: flowsSchema}},
	flowsSchema: {
		"authorizationCode": {s: flowSchema}, "clientCredentials": {s: flowSchema}, "implicit": {s: flowSchema},
		"password": {s: flowSchema}, "deviceCode": {s: flowSchema},
	},
}

// object walks the members of f (an object) against s; s nil means every
// member counts. sg is the signed counterpart (nil when absent).
func (w *unsignedWalk) object(f, sg *sj.Value, ptr string, s *schema, top bool) {
	for _, m := range f.Object {
		if top && m.Key == "signatures" {
			continue // never signed content (spec §8.4.1 rule 3)
		}
		var c child
		if s != nil {
			i, ok := s.lookup(m.Key)
			if !ok {
				continue // a member Cardex does not read
			}
			c = childSchemas[s][s.fields[i].name]
		}
		var sv *sj.Value
		if sg != nil && sg.Kind == sj.Object {
			sv = sg.Get(m.Key)
		}
		w.value(m.Value, sv, memberPtr(ptr, m.Key), c)
	}
}

func (w *unsignedWalk) value(f, sv *sj.Value, ptr string, c child) {
	if trivial(f) {
		return
	}
	if sv == nil || sv.Kind != f.Kind {
		w.add(ptr)
		return
	}
	switch f.Kind {
	case sj.Object:
		if c.mapOf {
			for _, m := range f.Object {
				w.value(m.Value, sv.Get(m.Key), memberPtr(ptr, m.Key), child{s: c.s})
			}
			return
		}
		w.object(f, sv, ptr, c.s, false)
	case sj.Array:
		if len(sv.Array) != len(f.Array) {
			w.add(ptr)
			return
		}
		for i, e := range f.Array {
			if e.Kind == sj.Object {
				w.value(e, sv.Array[i], itemPtr(ptr, i), c)
			}
		}
	}
}

// blank reports whether v holds nothing once "", null, [] and {} are
// removed recursively (what the sdk signers remove before signing).
func blank(v *sj.Value) bool {
	switch v.Kind {
	case sj.Null:
		return true
	case sj.String:
		return v.String == ""
	case sj.Array:
		for _, e := range v.Array {
			if !blank(e) {
				return false
			}
		}
		return true
	case sj.Object:
		for _, m := range v.Object {
			if !blank(m.Value) {
				return false
			}
		}
		return true
	}
	return false
}

// trivial reports whether v holds only a default: read as absent.
func trivial(v *sj.Value) bool {
	switch v.Kind {
	case sj.Null:
		return true
	case sj.String:
		return v.String == ""
	case sj.Bool:
		return !v.Bool
	case sj.Array:
		return len(v.Array) == 0
	case sj.Object:
		return len(v.Object) == 0
	}
	return false
}

// memberOf returns the member of object v read as field name of its level
// (in any spelling), or nil.
func memberOf(v *sj.Value, name string) *sj.Value {
	if v == nil || v.Kind != sj.Object {
		return nil
	}
	alias := snakeCase(name)
	for _, m := range v.Object {
		if m.Key == name || m.Key == alias {
			return m.Value
		}
	}
	return nil
}

// hasTypeForm reports whether a security scheme entry carries the v0.3
// `type`-tagged form.
func hasTypeForm(v *sj.Value) bool {
	t := memberOf(v, "type")
	return t != nil && !trivial(t)
}

// pointerTokens splits an RFC 6901 pointer into unescaped tokens.
func pointerTokens(ptr string) []string {
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts
}

// legacyView is the card as a v0.3 client reads it: without the v1-only
// members (supportedInterfaces, securityRequirements of the card and of its
// skills, the oneof wrappers of security schemes, extendedAgentCard), so
// the normalizer reads the v0.3 members in their place.
func legacyView(full *sj.Value) *sj.Value {
	out := &sj.Value{Kind: sj.Object}
	for _, m := range full.Object {
		name, _ := topName(m.Key)
		switch name {
		case "supportedInterfaces", "securityRequirements":
			continue
		case "capabilities":
			m = sj.Member{Key: m.Key, Value: without(m.Value, capabilitiesSchema, "extendedAgentCard")}
		case "securitySchemes":
			if m.Value.Kind == sj.Object {
				schemes := &sj.Value{Kind: sj.Object}
				for _, e := range m.Value.Object {
					schemes.Object = append(schemes.Object, sj.Member{Key: e.Key, Value: without(e.Value, schemeSchema,
						"apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme", "openIdConnectSecurityScheme", "mtlsSecurityScheme")})
				}
				m = sj.Member{Key: m.Key, Value: schemes}
			}
		case "skills":
			if m.Value.Kind == sj.Array {
				skills := &sj.Value{Kind: sj.Array}
				for _, e := range m.Value.Array {
					skills.Array = append(skills.Array, without(e, skillSchema, "securityRequirements"))
				}
				m = sj.Member{Key: m.Key, Value: skills}
			}
		}
		out.Object = append(out.Object, m)
	}
	return out
}

// without returns v (an object read against s) minus the named fields in
// any spelling; other values are returned as they are.
func without(v *sj.Value, s *schema, names ...string) *sj.Value {
	if v.Kind != sj.Object {
		return v
	}
	out := &sj.Value{Kind: sj.Object, Object: make([]sj.Member, 0, len(v.Object))}
	for _, m := range v.Object {
		if i, ok := s.lookup(m.Key); ok && containsString(names, s.fields[i].name) {
			continue
		}
		out.Object = append(out.Object, m)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// legacyInterfacesSigned reports whether every endpoint of the v0.3
// rendering is a signed interface (same URL, binding and protocol version).
// The tenant is not compared: v0.3 has none.
func legacyInterfacesSigned(legacy, signed []Interface) bool {
	for _, l := range legacy {
		found := false
		for _, s := range signed {
			if s.URL == l.URL && s.Binding == l.Binding && s.ProtocolVersion == l.ProtocolVersion {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func sameScheme(legacy, signed []SecurityScheme, name string) bool {
	var l, s *SecurityScheme
	for i := range legacy {
		if legacy[i].Name == name {
			l = &legacy[i]
		}
	}
	for i := range signed {
		if signed[i].Name == name {
			s = &signed[i]
		}
	}
	if l == nil || s == nil {
		return false
	}
	// HTTP authentication scheme names are case-insensitive (RFC 9110
	// §11.1): "bearer" restates "Bearer".
	if strings.EqualFold(l.Scheme, s.Scheme) {
		lc := *l
		lc.Scheme = s.Scheme
		return reflect.DeepEqual(lc, *s)
	}
	return false
}

func sameRequirements(a, b []SecurityRequirement) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func sameSkillSecurity(legacy, signed []Skill, i int) bool {
	if i >= len(legacy) || i >= len(signed) {
		return false
	}
	return sameRequirements(legacy[i].SecurityRequirements, signed[i].SecurityRequirements)
}
