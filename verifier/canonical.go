package verifier

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/strictjson"
)

// Profile names one way of turning a received card into the bytes a signer
// signed. Signers in the wild disagree (docs/verification.md), so the verifier
// tries each in the order of docs/verification.md and records the one that verified.
type Profile string

// The canonicalization profiles, in the order they are tried (docs/verification.md).
const (
	// ProfileSpec applies the A2A §8.4.1 presence rules over the v1 field
	// table, keeps unknown members as received, then RFC 8785.
	ProfileSpec Profile = "spec"
	// ProfileSpecV1Only is ProfileSpec that also drops every member the v1
	// schema does not define (the v0.3 keys of hybrid cards, vendor keys).
	ProfileSpecV1Only Profile = "spec-v1-only"
	// ProfileSDK is the v1 projection with every "", null, [] and {} removed
	// recursively, then RFC 8785 (a2a-js ≥ 1.0, a2a-python after PR #1193).
	ProfileSDK Profile = "sdk"
	// ProfilePythonLegacy is the sdk projection serialized the way a2a-python
	// did before its RFC 8785 fix: json.dumps(sort_keys=True,
	// separators=(',',':')) with ensure_ascii.
	ProfilePythonLegacy Profile = "python-legacy"
	// ProfileRaw is the received card minus top-level `signatures`, RFC 8785 only.
	ProfileRaw Profile = "raw"
)

// Profiles lists every profile in the order Verify tries them.
var Profiles = []Profile{ProfileSpec, ProfileSpecV1Only, ProfileSDK, ProfilePythonLegacy, ProfileRaw}

// Canonicalization errors.
var (
	ErrNotObject      = errors.New("verifier: card is not a JSON object")
	ErrUnknownProfile = errors.New("verifier: unknown canonicalization profile")
)

// Canonicalize returns the bytes a signer following profile would have signed
// for card. card is the strict tree of the received bytes; it is not modified.
func Canonicalize(profile Profile, card *strictjson.Value) ([]byte, error) {
	if card == nil || card.Kind != strictjson.Object {
		return nil, ErrNotObject
	}
	var tree *strictjson.Value
	switch profile {
	case ProfileSpec:
		tree = pruneMessage(card, agentCardMsg, false, true)
	case ProfileSpecV1Only:
		tree = pruneMessage(card, agentCardMsg, true, true)
	case ProfileSDK, ProfilePythonLegacy:
		tree = sdkTree(card)
	case ProfileRaw:
		tree = withoutSignatures(card)
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownProfile, profile)
	}
	if profile == ProfilePythonLegacy {
		return appendPython(nil, tree), nil
	}
	return jcsBytes(tree)
}

// ContentDigest is the hex SHA-256 of card's RFC 8785 form without its
// top-level `signatures` (the raw profile's bytes): what stays the same when
// an agent signs the same card again, as SDKs that sign on every request
// do with a fresh ECDSA signature each time. The registry uses it, with the
// verifying keys, as the identity of a version. "" for a non-object.
func ContentDigest(card *strictjson.Value) string {
	b, err := Canonicalize(ProfileRaw, card)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SignedTree returns the members of card that a signature under profile
// covers, as a tree: the card with every member the profile leaves out
// removed and nothing else changed. For the sdk and python-legacy profiles
// it is the v1 projection before empty values are removed: SDKs read an
// empty value as absent, and so does Cardex's model (the one exception, a
// security requirement whose schemes have no scopes, is documented in
// docs/verification.md). It is what agentcard.CheckCoverage compares the
// whole card with.
func SignedTree(profile Profile, card *strictjson.Value) *strictjson.Value {
	if card == nil || card.Kind != strictjson.Object {
		return card
	}
	switch profile {
	case ProfileSpec:
		return pruneMessage(card, agentCardMsg, false, true)
	case ProfileSpecV1Only, ProfileSDK, ProfilePythonLegacy:
		return pruneMessage(card, agentCardMsg, true, true)
	}
	return withoutSignatures(card)
}

// View is Cardex's view of a card verified under profile
// (docs/verification.md): the card normalized from the members the
// signature covers (SignedTree), not from the whole document. Under the
// sdk profiles, whose signers remove empty values before signing, empty
// elements (an empty skill, an interface's empty URL, "" among modes) are
// left out too: they were never signed.
func View(profile Profile, parsed *agentcard.Parsed, opts agentcard.Options) *agentcard.Card {
	if parsed == nil {
		return nil
	}
	opts.DropEmpty = profile == ProfileSDK || profile == ProfilePythonLegacy
	return agentcard.SignedView(parsed, SignedTree(profile, parsed.Tree), opts)
}

// jcsBytes serializes tree with RFC 8785 (members sorted by UTF-16 code
// units, ECMAScript numbers: docs/threats.md E.54, E.58), from the strict tree
// and never from a re-marshalled Go struct (CONTRIBUTING.md). See appendJCS.
func jcsBytes(tree *strictjson.Value) ([]byte, error) {
	return appendJCS(make([]byte, 0, 4096), tree), nil
}

// sdkTree is the v1 projection with empty values removed (a2a-js cleanEmpty,
// a2a-python _clean_empty). The card itself stays an object even when empty.
func sdkTree(card *strictjson.Value) *strictjson.Value {
	tree := pruneMessage(card, agentCardMsg, true, true)
	if c, ok := cleanEmpty(tree); ok {
		return c
	}
	return &strictjson.Value{Kind: strictjson.Object}
}

func withoutSignatures(card *strictjson.Value) *strictjson.Value {
	out := &strictjson.Value{Kind: strictjson.Object, Object: make([]strictjson.Member, 0, len(card.Object))}
	for _, m := range card.Object {
		// Only the top-level member is the signature container; a nested
		// `signatures` key is ordinary signed content (docs/threats.md E.60).
		if m.Key != "signatures" {
			out.Object = append(out.Object, m)
		}
	}
	return out
}

// pruneMessage applies spec §8.4.1 rule 1 to an object of message type m.
// Unknown members are kept verbatim unless dropUnknown. A value of the wrong
// JSON type is kept verbatim: there is no default to compare it with, and the
// signer saw it too. Subtrees are shared with the input, never modified.
func pruneMessage(v *strictjson.Value, m *message, dropUnknown, top bool) *strictjson.Value {
	if v.Kind != strictjson.Object {
		return v
	}
	out := &strictjson.Value{Kind: strictjson.Object, Object: make([]strictjson.Member, 0, len(v.Object))}
	for _, mem := range v.Object {
		if top && mem.Key == "signatures" {
			continue // spec §8.4.1 rule 3; only at the top level (E.60)
		}
		f, known := m.fields[mem.Key]
		if !known {
			if !dropUnknown {
				out.Object = append(out.Object, mem)
			}
			continue
		}
		if nv, keep := pruneField(mem.Value, f, dropUnknown); keep {
			out.Object = append(out.Object, strictjson.Member{Key: mem.Key, Value: nv})
		}
	}
	return out
}

func pruneField(v *strictjson.Value, f field, dropUnknown bool) (*strictjson.Value, bool) {
	if v.Kind == strictjson.Null {
		// ProtoJSON reads null as "not set"; a REQUIRED member is kept as
		// received because the verifier never invents values.
		return v, f.pres == required
	}
	keepDefault := f.pres != plain
	switch f.kind {
	case kindString:
		if v.Kind == strictjson.String && v.String == "" {
			return v, keepDefault
		}
	case kindBool:
		if v.Kind == strictjson.Bool && !v.Bool {
			return v, keepDefault
		}
	case kindStringList:
		if v.Kind == strictjson.Array && len(v.Array) == 0 {
			return v, f.pres == required
		}
	case kindStringMap:
		if v.Kind == strictjson.Object && len(v.Object) == 0 {
			return v, f.pres == required
		}
	case kindMessage:
		return pruneMessage(v, f.msg, dropUnknown, false), true
	case kindMessageList:
		if v.Kind != strictjson.Array {
			return v, true
		}
		if len(v.Array) == 0 {
			return v, f.pres == required
		}
		out := &strictjson.Value{Kind: strictjson.Array, Array: make([]*strictjson.Value, len(v.Array))}
		for i, e := range v.Array {
			out.Array[i] = pruneMessage(e, f.msg, dropUnknown, false)
		}
		return out, true
	case kindMessageMap:
		if v.Kind != strictjson.Object {
			return v, true
		}
		if len(v.Object) == 0 {
			return v, f.pres == required
		}
		out := &strictjson.Value{Kind: strictjson.Object, Object: make([]strictjson.Member, len(v.Object))}
		for i, e := range v.Object {
			// Map entries are always serialized, whatever their value.
			out.Object[i] = strictjson.Member{Key: e.Key, Value: pruneMessage(e.Value, f.msg, dropUnknown, false)}
		}
		return out, true
	case kindStruct:
		// google.protobuf.Struct carries arbitrary JSON: kept verbatim.
		return v, true
	}
	return v, true
}

// cleanEmpty removes "", null, [] and {} recursively, including empty
// elements of arrays and containers that become empty once cleaned.
func cleanEmpty(v *strictjson.Value) (*strictjson.Value, bool) {
	switch v.Kind {
	case strictjson.Null:
		return nil, false
	case strictjson.String:
		return v, v.String != ""
	case strictjson.Array:
		out := &strictjson.Value{Kind: strictjson.Array, Array: make([]*strictjson.Value, 0, len(v.Array))}
		for _, e := range v.Array {
			if c, ok := cleanEmpty(e); ok {
				out.Array = append(out.Array, c)
			}
		}
		return out, len(out.Array) > 0
	case strictjson.Object:
		out := &strictjson.Value{Kind: strictjson.Object, Object: make([]strictjson.Member, 0, len(v.Object))}
		for _, m := range v.Object {
			if c, ok := cleanEmpty(m.Value); ok {
				out.Object = append(out.Object, strictjson.Member{Key: m.Key, Value: c})
			}
		}
		return out, len(out.Object) > 0
	}
	return v, true
}
