package verifier

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cardexhq/cardex/strictjson"
)

// ErrNotPortable is the reason PreparePortable refuses a card: it holds a
// member the spec form signs and the SDK form does not (or the other way
// round) that cannot be removed without changing what the card says.
var ErrNotPortable = errors.New("verifier: the card cannot be signed so that every verifier accepts it")

// PortableError lists the members that keep the spec and SDK forms apart.
type PortableError struct {
	// Members are "pointer: why" lines, in document order.
	Members []string
}

func (e *PortableError) Error() string {
	return ErrNotPortable.Error() + ":\n  " + strings.Join(e.Members, "\n  ")
}

func (e *PortableError) Unwrap() error { return ErrNotPortable }

// PreparePortable readies card (JSON text) for a signature that verifiers
// of every profile accept: the spec form (A2A §8.4.1, spec-literal
// verifiers), the v1-only form and the SDK form (a2a-js, a2a-python) must
// be the same bytes. They differ on three things, and each is handled:
//
//   - values that mean "unset" — null, "", [], {}, an empty string in a
//     list, a plain (non-optional) false — which the spec form keeps or
//     drops by field presence and the SDK form always drops (or keeps, for
//     false): they are removed, and listed in removed;
//   - members outside the v1 schema (the v0.3 members of a hybrid card,
//     vendor keys): the spec form signs them, the SDK form drops them. They
//     carry meaning, so the card is refused (*PortableError);
//   - empty values that carry meaning: a security requirement naming a
//     scheme without scopes (the SDK form drops the whole requirement),
//     empty values inside extension params (the extension's own data), a
//     scope with an empty description: refused as well.
//
// The result is the card with the removals made (members keep their
// order and values) and no signature added; Sign it under ProfileSpec.
func PreparePortable(card []byte) (prepared []byte, removed []string, err error) {
	tree, err := strictjson.Parse(card)
	if err != nil {
		return nil, nil, err
	}
	if tree.Kind != strictjson.Object {
		return nil, nil, ErrNotObject
	}
	p := &portable{}
	out, _ := p.message(tree, agentCardMsg, "", true)
	if len(p.refused) > 0 {
		return nil, nil, &PortableError{Members: p.refused}
	}
	spec, _ := Canonicalize(ProfileSpec, out)
	sdk, _ := Canonicalize(ProfileSDK, out)
	if !bytes.Equal(spec, sdk) {
		// Every difference the profiles know of is handled above; this is
		// a guard against a profile changing without this function.
		return nil, nil, &PortableError{Members: []string{"the spec and SDK forms still differ after the removals"}}
	}
	return strictjson.Marshal(out), p.removed, nil
}

type portable struct {
	removed, refused []string
}

func (p *portable) remove(ptr, why string) { p.removed = append(p.removed, ptr+": "+why) }
func (p *portable) refuse(ptr, why string) { p.refused = append(p.refused, ptr+": "+why) }

// message returns v (an object of message m) with the removals made, and
// whether anything is left.
func (p *portable) message(v *strictjson.Value, m *message, ptr string, top bool) (*strictjson.Value, bool) {
	if v.Kind != strictjson.Object {
		return v, true
	}
	out := &strictjson.Value{Kind: strictjson.Object, Object: make([]strictjson.Member, 0, len(v.Object))}
	for _, mem := range v.Object {
		mp := ptr + "/" + strictjson.EscapePointerToken(mem.Key)
		if top && mem.Key == "signatures" {
			out.Object = append(out.Object, mem) // not signed content
			continue
		}
		f, known := m.fields[mem.Key]
		if !known {
			p.refuse(mp, "not a member of the v1 "+m.name+": the spec form signs it, the SDK form (a2a-js, a2a-python) drops it; remove it, or sign with --profile spec or --profile sdk")
			continue
		}
		if nv, keep := p.field(mem.Value, f, mp); keep {
			out.Object = append(out.Object, strictjson.Member{Key: mem.Key, Value: nv})
		}
	}
	return out, len(out.Object) > 0
}

func (p *portable) field(v *strictjson.Value, f field, ptr string) (*strictjson.Value, bool) {
	switch {
	case v.Kind == strictjson.Null:
		p.remove(ptr, "null")
		return nil, false
	case v.Kind == strictjson.String && v.String == "":
		p.remove(ptr, "empty string")
		return nil, false
	case v.Kind == strictjson.Bool && !v.Bool && f.pres == plain:
		p.remove(ptr, "false, the default (the spec form drops it, the SDK form keeps it)")
		return nil, false
	case v.Kind == strictjson.Array && len(v.Array) == 0:
		p.remove(ptr, "empty list")
		return nil, false
	case v.Kind == strictjson.Object && len(v.Object) == 0 && f.kind != kindMessageMap:
		p.remove(ptr, "empty object")
		return nil, false
	}
	switch f.kind {
	case kindStringList:
		if v.Kind != strictjson.Array {
			return v, true
		}
		out := &strictjson.Value{Kind: strictjson.Array}
		for i, e := range v.Array {
			if e.Kind == strictjson.String && e.String == "" || e.Kind == strictjson.Null {
				p.remove(ptr+"/"+strconv.Itoa(i), "empty list element")
				continue
			}
			out.Array = append(out.Array, e)
		}
		if len(out.Array) == 0 {
			return nil, false
		}
		return out, true
	case kindStringMap:
		if v.Kind == strictjson.Object {
			for _, e := range v.Object {
				if e.Value.Kind == strictjson.Null || (e.Value.Kind == strictjson.String && e.Value.String == "") {
					p.refuse(ptr+"/"+strictjson.EscapePointerToken(e.Key), "a scope with an empty description: the SDK form drops the scope; describe it")
				}
			}
		}
		return v, true
	case kindMessage:
		return p.message(v, f.msg, ptr, false)
	case kindMessageList:
		if v.Kind != strictjson.Array {
			return v, true
		}
		out := &strictjson.Value{Kind: strictjson.Array}
		for i, e := range v.Array {
			ep := ptr + "/" + strconv.Itoa(i)
			if f.msg == securityRequirementMsg && scopeless(e) {
				p.refuse(ep, "a security requirement whose schemes have no scopes: the SDK form (a2a-js, a2a-python) drops it entirely, so their signatures cannot cover it; list a scope, or sign with --profile spec")
				out.Array = append(out.Array, e)
				continue
			}
			if ne, keep := p.message(e, f.msg, ep, false); keep {
				out.Array = append(out.Array, ne)
			} else {
				p.remove(ep, "empty object")
			}
		}
		if len(out.Array) == 0 {
			return nil, false
		}
		return out, true
	case kindMessageMap:
		if v.Kind != strictjson.Object {
			return v, true
		}
		if len(v.Object) == 0 {
			p.remove(ptr, "empty object")
			return nil, false
		}
		out := &strictjson.Value{Kind: strictjson.Object}
		for _, e := range v.Object {
			ep := ptr + "/" + strictjson.EscapePointerToken(e.Key)
			before := len(p.refused)
			ne, keep := p.message(e.Value, f.msg, ep, false)
			if !keep && len(p.refused) == before {
				p.refuse(ep, "an entry with nothing in it: the SDK form drops it, the spec form keeps it")
			}
			out.Object = append(out.Object, strictjson.Member{Key: e.Key, Value: ne})
		}
		return out, true
	case kindStruct:
		if c, ok := cleanEmpty(v); !ok || !bytes.Equal(strictjson.Marshal(c), strictjson.Marshal(v)) {
			p.refuse(ptr, "extension params hold empty values (null, \"\", [] or {}): the SDK form drops them, the spec form keeps them; they are the extension's data, so remove them yourself")
		}
		return v, true
	}
	return v, true
}

// scopeless reports whether a security requirement names only schemes
// without scopes ({"schemes":{"bearer":{}}}, or {"list":[]}).
func scopeless(req *strictjson.Value) bool {
	c, ok := cleanEmpty(req)
	return req.Kind == strictjson.Object && len(req.Object) > 0 && (!ok || c.Get("schemes") == nil || len(c.Get("schemes").Object) < schemeCount(req))
}

func schemeCount(req *strictjson.Value) int {
	s := req.Get("schemes")
	if s == nil || s.Kind != strictjson.Object {
		return 0
	}
	return len(s.Object)
}

// DifferingProfiles lists the profiles whose bytes for card differ from
// those of profile p: verifiers that compute them will not accept a
// signature made under p.
func DifferingProfiles(p Profile, card []byte) ([]Profile, error) {
	tree, err := strictjson.Parse(card)
	if err != nil {
		return nil, err
	}
	mine, err := Canonicalize(p, tree)
	if err != nil {
		return nil, err
	}
	var out []Profile
	for _, q := range Profiles {
		if q == p {
			continue
		}
		if b, err := Canonicalize(q, tree); err != nil || !bytes.Equal(b, mine) {
			out = append(out, q)
		}
	}
	return out, nil
}

// ParseProfile reads a profile name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = string(p)
	}
	return "", fmt.Errorf("%w %q (one of %s)", ErrUnknownProfile, s, strings.Join(names, ", "))
}
