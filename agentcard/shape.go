package agentcard

import (
	"strconv"
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// Card shapes (Card.Shape).
const (
	ShapeV01    = "v0.1"
	ShapeV02    = "v0.2"
	ShapeV03    = "v0.3"
	ShapeV1     = "v1"
	ShapeHybrid = "hybrid"
)

// shapeVersion is the protocol version a card gets from its shape when it
// declares none (docs/api.md "Lists and search").
var shapeVersion = map[string]string{
	ShapeV01: "0.1", ShapeV02: "0.2", ShapeV03: "0.3", ShapeV1: "1.0", ShapeHybrid: "1.0",
}

// detectShape decides how a card was written (docs/cards.md, §6):
//
//  1. a non-empty supportedInterfaces makes it v1, or "hybrid" when v0.x
//     members ride along (url, preferredTransport, additionalInterfaces,
//     protocolVersion, supportsAuthenticatedExtendedCard, security);
//  2. a card with none of the v0.x endpoint/security members
//     (url, preferredTransport, additionalInterfaces, protocolVersion,
//     supportsAuthenticatedExtendedCard, security, authentication) is a
//     v1 card missing its interfaces (the TCK's minimal signed card);
//  3. otherwise it is v0.x: v0.3 when it uses a member v0.3 introduced
//     (signatures, skills[].security, a mutualTLS scheme,
//     oauth2MetadataUrl); else the declared protocolVersion's minor
//     version (0.1, 0.2, 0.3; anything else reads as v0.3, the last v0.x
//     shape); else v0.2 when it uses a member v0.2 introduced
//     (securitySchemes, security, supportsAuthenticatedExtendedCard,
//     iconUrl, preferredTransport, additionalInterfaces,
//     capabilities.extensions); else v0.1 when it has v0.1's
//     `authentication`; else v0.2, the shape of most undated samples.
func detectShape(top obj, tree *sj.Value) string {
	legacy := top.has("url") || top.has("preferredTransport") || top.has("additionalInterfaces") ||
		top.has("protocolVersion") || top.has("supportsAuthenticatedExtendedCard") || top.has("security")
	if si, _ := top.get("supportedInterfaces"); si != nil && len(si.Array) > 0 {
		if legacy {
			return ShapeHybrid
		}
		return ShapeV1
	}
	if !legacy && !top.has("authentication") {
		return ShapeV1
	}
	if usesV03(top, tree) {
		return ShapeV03
	}
	if pv := top.str("protocolVersion"); pv != "" {
		switch mm, _ := majorMinor(pv); mm {
		case "0.1":
			return ShapeV01
		case "0.2":
			return ShapeV02
		default:
			return ShapeV03
		}
	}
	caps, _ := top.get("capabilities")
	if top.has("securitySchemes") || top.has("security") || top.has("supportsAuthenticatedExtendedCard") ||
		top.has("iconUrl") || top.has("preferredTransport") || top.has("additionalInterfaces") ||
		(caps != nil && (caps.Get("extensions") != nil)) {
		return ShapeV02
	}
	if top.has("authentication") {
		return ShapeV01
	}
	return ShapeV02
}

func usesV03(top obj, tree *sj.Value) bool {
	if top.has("signatures") {
		return true
	}
	if skills, _ := top.get("skills"); skills != nil {
		for _, s := range skills.Array {
			if s.Get("security") != nil {
				return true
			}
		}
	}
	if schemes, _ := top.get("securitySchemes"); schemes != nil {
		for _, m := range schemes.Object {
			t := m.Value.Get("type")
			if t != nil && t.Kind == sj.String && strings.EqualFold(t.String, "mutualTLS") {
				return true
			}
			if m.Value.Get("oauth2MetadataUrl") != nil || m.Value.Get("oauth2_metadata_url") != nil {
				return true
			}
		}
	}
	return false
}

// majorMinor normalizes a protocol version to Major.Minor ("1.0.0" → "1.0",
// "0.2.9" → "0.2", "1" → "1.0"). ok is false when v is not numeric dotted
// (then v is returned trimmed, as written).
func majorMinor(v string) (string, bool) {
	v = strings.TrimSpace(v)
	parts := strings.Split(v, ".")
	if len(parts) > 3 {
		return v, false
	}
	for _, p := range parts {
		if p == "" || len(p) > 6 {
			return v, false
		}
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return v, false
		}
	}
	major, _ := strconv.ParseUint(parts[0], 10, 32)
	minor := uint64(0)
	if len(parts) > 1 {
		minor, _ = strconv.ParseUint(parts[1], 10, 32)
	}
	return strconv.FormatUint(major, 10) + "." + strconv.FormatUint(minor, 10), true
}

// protocolVersion normalizes a declared version, warning when it is not a
// version number.
func (n *normalizer) protocolVersion(ptr, v string) string {
	if v == "" {
		return ""
	}
	mm, ok := majorMinor(v)
	if !ok {
		n.c.warn(ptr, CodeInvalidVersion, "protocol version %q is not Major.Minor", v)
	}
	return mm
}
