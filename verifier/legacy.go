package verifier

import (
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/strictjson"
)

// LegacyRendering is the v0.3 form of a card verified under profile,
// derived from the members the signature covers (docs/verification.md
// "Serving cards"): the signed members as received, the card's signatures,
// and the v0.3 members a v0.3 client reads (url, preferredTransport,
// protocolVersion, additionalInterfaces, the `type` form of each security
// scheme, security, supportsAuthenticatedExtendedCard) written from the
// signed ones. Under the partial profiles the added members are outside
// what the signature covers, so the result verifies exactly as the card
// did. view is Cardex's view of the card (View). Nil when the card has no
// A2A interface to name.
func LegacyRendering(profile Profile, card *strictjson.Value, view *agentcard.Card) []byte {
	if card == nil || card.Kind != strictjson.Object || view == nil {
		return nil
	}
	var main *agentcard.Interface
	for i := range view.Interfaces {
		it := &view.Interfaces[i]
		if !it.IsA2A() || it.URL == "" {
			continue
		}
		if main == nil || (!strings.HasPrefix(main.ProtocolVersion, "0.") && strings.HasPrefix(it.ProtocolVersion, "0.")) {
			main = it
		}
	}
	if main == nil {
		return nil
	}
	signed := SignedTree(profile, card).Clone()
	out := &strictjson.Value{Kind: strictjson.Object}
	str := func(s string) *strictjson.Value { return &strictjson.Value{Kind: strictjson.String, String: s} }
	add := func(o *strictjson.Value, k string, v *strictjson.Value) {
		o.Object = append(o.Object, strictjson.Member{Key: k, Value: v})
	}
	for _, m := range signed.Object {
		switch m.Key {
		case "securitySchemes":
			add(out, m.Key, legacySchemes(m.Value))
		case "skills":
			add(out, m.Key, legacySkills(m.Value))
		default:
			add(out, m.Key, m.Value)
		}
	}
	add(out, "url", str(main.URL))
	add(out, "preferredTransport", str(main.Binding))
	pv := main.ProtocolVersion
	if pv == "" {
		pv = "0.3"
	}
	add(out, "protocolVersion", str(pv))
	extra := &strictjson.Value{Kind: strictjson.Array}
	for _, it := range view.Interfaces {
		if it.IsA2A() && it.URL != "" && it.ProtocolVersion == main.ProtocolVersion {
			o := &strictjson.Value{Kind: strictjson.Object}
			add(o, "url", str(it.URL))
			add(o, "transport", str(it.Binding))
			extra.Array = append(extra.Array, o)
		}
	}
	add(out, "additionalInterfaces", extra)
	if req := legacyRequirements(signed.Get("securityRequirements")); req != nil {
		add(out, "security", req)
	}
	if view.Capabilities.ExtendedAgentCard {
		add(out, "supportsAuthenticatedExtendedCard", &strictjson.Value{Kind: strictjson.Bool, Bool: true})
	}
	if sigs := card.Get("signatures"); sigs != nil {
		add(out, "signatures", sigs)
	}
	return strictjson.Marshal(out)
}

// legacySchemes adds to each v1 (oneof-wrapped) scheme its v0.3 `type` form.
func legacySchemes(v *strictjson.Value) *strictjson.Value {
	if v.Kind != strictjson.Object {
		return v
	}
	out := &strictjson.Value{Kind: strictjson.Object}
	for _, e := range v.Object {
		s := e.Value
		if s.Kind == strictjson.Object {
			s = legacyScheme(s)
		}
		out.Object = append(out.Object, strictjson.Member{Key: e.Key, Value: s})
	}
	return out
}

// legacyTypes maps the v1 wrapper members to the v0.3 `type` values and
// renames of their fields.
var legacyTypes = map[string]struct {
	typ    string
	rename map[string]string
}{
	"apiKeySecurityScheme":        {"apiKey", map[string]string{"location": "in"}},
	"httpAuthSecurityScheme":      {"http", nil},
	"oauth2SecurityScheme":        {"oauth2", nil},
	"openIdConnectSecurityScheme": {"openIdConnect", nil},
	"mtlsSecurityScheme":          {"mutualTLS", nil},
}

func legacyScheme(s *strictjson.Value) *strictjson.Value {
	out := &strictjson.Value{Kind: strictjson.Object, Object: append([]strictjson.Member(nil), s.Object...)}
	for _, m := range s.Object {
		lt, ok := legacyTypes[m.Key]
		if !ok || m.Value.Kind != strictjson.Object {
			continue
		}
		out.Object = append(out.Object, strictjson.Member{Key: "type", Value: &strictjson.Value{Kind: strictjson.String, String: lt.typ}})
		for _, f := range m.Value.Object {
			k := f.Key
			if r, ok := lt.rename[k]; ok {
				k = r
			}
			out.Object = append(out.Object, strictjson.Member{Key: k, Value: f.Value})
		}
		break
	}
	return out
}

func legacySkills(v *strictjson.Value) *strictjson.Value {
	if v.Kind != strictjson.Array {
		return v
	}
	out := &strictjson.Value{Kind: strictjson.Array}
	for _, sk := range v.Array {
		if sk.Kind == strictjson.Object {
			if req := legacyRequirements(sk.Get("securityRequirements")); req != nil {
				sk = &strictjson.Value{Kind: strictjson.Object, Object: append(append([]strictjson.Member(nil), sk.Object...),
					strictjson.Member{Key: "security", Value: req})}
			}
		}
		out.Array = append(out.Array, sk)
	}
	return out
}

// legacyRequirements turns v1 requirements ({"schemes":{"name":{"list":[…]}}})
// into the v0.3 form ({"name":[…]}); nil when there are none.
func legacyRequirements(v *strictjson.Value) *strictjson.Value {
	if v == nil || v.Kind != strictjson.Array || len(v.Array) == 0 {
		return nil
	}
	out := &strictjson.Value{Kind: strictjson.Array}
	for _, r := range v.Array {
		o := &strictjson.Value{Kind: strictjson.Object}
		if r.Kind == strictjson.Object {
			if schemes := r.Get("schemes"); schemes != nil && schemes.Kind == strictjson.Object {
				for _, s := range schemes.Object {
					scopes := &strictjson.Value{Kind: strictjson.Array}
					if s.Value.Kind == strictjson.Object {
						if l := s.Value.Get("list"); l != nil && l.Kind == strictjson.Array {
							scopes = l
						}
					} else if s.Value.Kind == strictjson.Array {
						scopes = s.Value
					}
					o.Object = append(o.Object, strictjson.Member{Key: s.Key, Value: scopes})
				}
			}
		}
		out.Array = append(out.Array, o)
	}
	return out
}
