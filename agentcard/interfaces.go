package agentcard

import (
	"slices"
	"strings"
	"unicode"

	sj "github.com/cardexhq/cardex/strictjson"
)

// interfaces returns the card's endpoints and its distinct protocol
// versions, preferred first (docs/cards.md). A non-empty v1
// supportedInterfaces wins; otherwise the v0.x url + preferredTransport
// (default JSONRPC) + additionalInterfaces are bridged, each stamped with the
// card's protocolVersion (or the version of its shape). When no interface
// declares a version, the card's declared protocolVersion or its shape's
// version is the one protocol version (docs/api.md: a v0.1/v0.2 card
// without one gets 0.1/0.2; v0.3 gets 0.3 and v1 1.0 by the same rule).
func (n *normalizer) interfaces(top obj) ([]Interface, []string) {
	out := []Interface{}
	si, siPtr := top.get("supportedInterfaces")
	pvV, pvPtr := top.get("protocolVersion")
	cardPV := ""
	if pvV != nil {
		cardPV = n.protocolVersion(pvPtr, pvV.String)
	}
	if si != nil && len(si.Array) > 0 {
		if len(si.Array) > MaxInterfaces {
			n.c.warn(siPtr, CodeTooMany, "%d interfaces, more than the %d allowed", len(si.Array), MaxInterfaces)
		}
		for i, e := range si.Array {
			if e.Kind != sj.Object {
				continue // warned as wrong-type
			}
			o := n.c.open(e, itemPtr(siPtr, i), interfaceSchema)
			n.requireText(o, "url")
			n.requireText(o, "protocolBinding")
			n.requireText(o, "protocolVersion")
			_, bp := o.get("protocolBinding")
			it := Interface{URL: o.str("url"), Binding: n.binding(bp, o.str("protocolBinding")), Tenant: o.str("tenant")}
			if v, p := o.get("protocolVersion"); v != nil {
				it.ProtocolVersion = n.protocolVersion(p, v.String)
			}
			if _, p := o.get("url"); it.URL != "" {
				n.checkEndpointHost(p, n.checkURL(p, it.URL, urlEndpoint, it.Binding))
			} else if n.dropEmpty {
				continue
			}
			out = append(out, it)
		}
		// Hybrid cards also carry the v0.3 rendering; its URLs are
		// checked too, as a client of the v0.3 shape would follow them.
		if top.has("url") || top.has("additionalInterfaces") {
			n.legacyInterfaces(top, cardPV)
		}
	} else {
		if si != nil {
			n.c.warn(siPtr, CodeEmptyRequired, "supportedInterfaces is required and is empty")
		}
		if cardPV == "" {
			cardPV = shapeVersion[n.shape]
		}
		if n.shape == ShapeV1 {
			if !top.has("supportedInterfaces") {
				n.c.warn(siPtr, CodeMissingRequired, "supportedInterfaces is required")
			}
		} else {
			out = n.legacyInterfaces(top, cardPV)
		}
	}
	versions := []string{}
	for _, it := range out {
		if !it.IsA2A() {
			continue // an MCP endpoint's 2025-06-18 is no A2A version
		}
		if it.ProtocolVersion != "" && !slices.Contains(versions, it.ProtocolVersion) {
			versions = append(versions, it.ProtocolVersion)
		}
	}
	if len(versions) == 0 {
		if cardPV == "" {
			cardPV = shapeVersion[n.shape]
		}
		versions = append(versions, cardPV)
	}
	return out, versions
}

// legacyInterfaces bridges v0.2/v0.3 endpoints. An additional interface
// equal to one already listed (same URL and transport; §5.6 says the main
// URL SHOULD be repeated there) is skipped.
func (n *normalizer) legacyInterfaces(top obj, pv string) []Interface {
	out := []Interface{}
	_, bp := top.get("preferredTransport")
	binding := n.binding(bp, top.str("preferredTransport"))
	if binding == "" {
		binding = "JSONRPC"
	}
	uv, up := top.get("url")
	switch {
	case uv == nil && top.has("url"):
	case uv == nil:
		n.c.warn(up, CodeMissingRequired, "url is required (or supportedInterfaces)")
	case uv.String == "":
		n.c.warn(up, CodeEmptyRequired, "url is required and is empty")
	default:
		n.checkEndpointHost(up, n.checkURL(up, uv.String, urlEndpoint, binding))
		out = append(out, Interface{URL: uv.String, Binding: binding, ProtocolVersion: pv})
	}
	av, ap := top.get("additionalInterfaces")
	if av == nil {
		return out
	}
	if len(av.Array) > MaxInterfaces {
		n.c.warn(ap, CodeTooMany, "%d interfaces, more than the %d allowed", len(av.Array), MaxInterfaces)
	}
	for i, e := range av.Array {
		if e.Kind != sj.Object {
			continue // warned as wrong-type
		}
		o := n.c.open(e, itemPtr(ap, i), legacyIfSchema)
		n.requireText(o, "url")
		n.requireText(o, "transport")
		_, tp := o.get("transport")
		it := Interface{URL: o.str("url"), Binding: n.binding(tp, o.str("transport")), ProtocolVersion: pv}
		if it.URL == "" {
			continue
		}
		_, p := o.get("url")
		n.checkEndpointHost(p, n.checkURL(p, it.URL, urlEndpoint, it.Binding))
		if slices.ContainsFunc(out, func(x Interface) bool { return x.URL == it.URL && x.Binding == it.Binding }) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// The core protocol bindings, spelled as the specification spells them.
const (
	BindingJSONRPC  = "JSONRPC"
	BindingGRPC     = "GRPC"
	BindingHTTPJSON = "HTTP+JSON"
)

// nearBindings are spellings of the core bindings seen in published cards
// (jsonrpc, json-rpc, HTTP_JSON, http+json…), compared after uppercasing and
// removing separators. A binding is otherwise an open string (custom
// bindings are URIs) and kept as written.
var nearBindings = map[string]string{
	"JSONRPC": BindingJSONRPC, "JSONRPC2": BindingJSONRPC, "JSONRPC20": BindingJSONRPC,
	"GRPC":     BindingGRPC,
	"HTTPJSON": BindingHTTPJSON, "JSONHTTP": BindingHTTPJSON,
}

// binding normalizes a near-miss spelling of a core binding to the spec's
// name, with a "noncanonical-binding" warning, so one binding is one facet
// value (binding=JSONRPC finds "json-rpc" cards).
func (n *normalizer) binding(ptr, b string) string {
	if b == "" || b == BindingJSONRPC || b == BindingGRPC || b == BindingHTTPJSON {
		return b
	}
	key := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '+', '.', ' ', '/':
			return -1
		}
		return unicode.ToUpper(r)
	}, b)
	if c, ok := nearBindings[key]; ok {
		n.c.warn(ptr, CodeNoncanonicalBinding, "protocol binding %q read as %q, the specification's name", b, c)
		return c
	}
	return b
}

// IsA2A reports whether the interface is an A2A endpoint: a core binding
// or a custom binding URI, and a Major.Minor protocol version (or none).
// Cards also list other protocols' endpoints (an MCP server with protocol
// version 2025-06-18); those are shown as other interfaces and kept out of
// the A2A facets (binding, protocol version).
func (it Interface) IsA2A() bool {
	switch {
	case it.Binding == BindingJSONRPC || it.Binding == BindingGRPC || it.Binding == BindingHTTPJSON:
	case strings.Contains(it.Binding, ":"): // a custom binding URI
	default:
		return false
	}
	if it.ProtocolVersion == "" {
		return true
	}
	_, ok := majorMinor(it.ProtocolVersion)
	return ok
}

// hasA2AInterface reports whether the card lists at least one A2A endpoint:
// the least a document needs to be a reachable agent card (docs/lint.md).
// An interface missing its binding (flagged missing-required) still counts;
// one of another protocol (an MCP server) does not.
func hasA2AInterface(c *Card) bool {
	for _, it := range c.Interfaces {
		if it.Binding == "" || it.IsA2A() {
			return true
		}
	}
	return false
}
