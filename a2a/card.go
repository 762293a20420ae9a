package a2a

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
)

// Paths of the interfaces, under the server's base URL.
const (
	CardPath    = "/.well-known/agent-card.json"
	JSONRPCPath = "/a2a/jsonrpc"
	RESTPath    = "/a2a/rest"
)

// cardMediaType is the media type the AI Catalog gives A2A cards; a client
// that asks for it gets it, every other client gets application/json, which
// is what the A2A SDKs serve and expect (the A2A specification defines no
// card media type of its own).
const cardMediaType = "application/a2a-agent-card+json"

// cardJSON is Cardex's own Agent Card for the base URL: A2A 1.0 members
// (supportedInterfaces, in order of preference: JSON-RPC 1.0, HTTP+JSON 1.0,
// JSON-RPC 0.3) plus, unless v1Only, the 0.3 members (url,
// preferredTransport, protocolVersion, additionalInterfaces) so 0.3
// clients, which read only those, find the 0.3 interface too. A client
// that asks with A2A-Version: 1.0 gets the v1Only card, which the v1
// schema validates.
func cardJSON(base, version string, v1Only bool) []byte {
	rpc, rest := base+JSONRPCPath, base+RESTPath
	type iface struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	}
	type legacyIface struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	}
	modes := []string{"text/plain", "application/json"}
	card := struct {
		Name                 string            `json:"name"`
		Description          string            `json:"description"`
		Version              string            `json:"version"`
		SupportedInterfaces  []iface           `json:"supportedInterfaces"`
		Capabilities         map[string]any    `json:"capabilities"`
		DefaultInputModes    []string          `json:"defaultInputModes"`
		DefaultOutputModes   []string          `json:"defaultOutputModes"`
		Skills               []agentcard.Skill `json:"skills"`
		URL                  string            `json:"url,omitempty"`
		PreferredTransport   string            `json:"preferredTransport,omitempty"`
		ProtocolVersion      string            `json:"protocolVersion,omitempty"`
		AdditionalInterfaces []legacyIface     `json:"additionalInterfaces,omitempty"`
	}{
		Name: "Cardex",
		Description: "A curated registry of A2A agents. Ask it for agents by what they can do: " +
			"it answers with the matching agents, their cards, trust and health.",
		Version: version,
		SupportedInterfaces: []iface{
			{rpc, "JSONRPC", "1.0"},
			{rest, "HTTP+JSON", "1.0"},
			{rpc, "JSONRPC", "0.3"},
		},
		Capabilities:       map[string]any{"streaming": false, "pushNotifications": false, "extendedAgentCard": false},
		DefaultInputModes:  modes,
		DefaultOutputModes: modes,
		Skills: []agentcard.Skill{{
			ID:   "find-agents",
			Name: "Find agents",
			Description: "Finds registered agents by what they can do. Send free text, and optionally a data part " +
				"with the filters of GET /api/v1/agents as JSON lists (tag, skill, inputMode, outputMode, capability, " +
				"binding, securityScheme, protocolVersion, provider, extension, trust, pageSize, pageToken). pageSize is 1 to 100, " +
				"20 when absent; 0 or more than 100 is invalid params. The answer is a text summary and a data part " +
				"{agents, totalSize, nextPageToken}.",
			Tags:        []string{"discovery", "registry", "search", "agents"},
			Examples:    []string{"agents that convert currencies", `{"tag":["finance"],"trust":["verified"],"pageSize":5}`},
			InputModes:  modes,
			OutputModes: modes,
		}, {
			ID:   "get-agent",
			Name: "Get an agent's card",
			Description: "Returns one registered agent with its card, trust and health: send a data part " +
				`{"id":"<agent id>"}. The answer has the same shape as a search with one agent.`,
			Tags:        []string{"discovery", "registry", "agent-card"},
			Examples:    []string{`{"id":"01JD6Y7W0Q8ZP9X3V5T2R4N6M8"}`},
			InputModes:  []string{"application/json"},
			OutputModes: modes,
		}},
	}
	if !v1Only {
		card.URL, card.PreferredTransport, card.ProtocolVersion = rpc, "JSONRPC", "0.3.0"
		card.AdditionalInterfaces = []legacyIface{{rpc, "JSONRPC"}}
	}
	b, err := json.Marshal(card)
	if err != nil {
		panic(err) // a fixed struct of strings always marshals
	}
	return b
}

// etag is a strong validator of the served bytes.
func etag(b []byte) string {
	h := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(h[:18]) + `"`
}

// serveCard answers GET and HEAD of the card with caching validators and
// open CORS (any page may read a public card; it carries no credentials).
func (h *handler) serveCard(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Expose-Headers", "ETag")
	if r.Method == http.MethodOptions {
		hd.Set("Access-Control-Allow-Methods", "GET, HEAD")
		hd.Set("Access-Control-Allow-Headers", "If-None-Match, A2A-Version")
		hd.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, err := h.card(r)
	if err != nil {
		h.log.Error("agent card", "err", err.Error())
		http.Error(w, "the agent card cannot be built", http.StatusInternalServerError)
		return
	}
	tag := etag(body)
	hd.Set("ETag", tag)
	hd.Set("Vary", "Accept, A2A-Version")
	if h.base != "" {
		hd.Set("Cache-Control", "public, max-age=300")
	} else {
		// Built from the request's Host: a shared cache must not reuse it
		// for another name.
		hd.Set("Cache-Control", "no-cache")
		hd.Add("Vary", "Host")
	}
	ct := "application/json"
	if strings.Contains(r.Header.Get("Accept"), cardMediaType) {
		ct = cardMediaType
	}
	hd.Set("Content-Type", ct)
	if etagMatch(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		hd.Set("Content-Length", itoa(len(body)))
		return
	}
	w.Write(body)
}

// etagMatch is the weak comparison of If-None-Match (RFC 9110 §13.1.2).
func etagMatch(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}

// card is the card bytes for r, in the rendering its A2A-Version asks
// for (cardJSON): built once per rendering for a configured base URL (and
// signed, when a signer is set), else for the request's own origin.
func (h *handler) card(r *http.Request) ([]byte, error) {
	v, _ := protocolVersion(r)
	i := 0
	if v == v10 {
		i = 1
	}
	if h.base != "" {
		c := &h.cards[i]
		c.once.Do(func() {
			b := cardJSON(h.base, h.version, i == 1)
			if h.sign != nil {
				b, c.err = h.sign(b)
			}
			var out bytes.Buffer
			if c.err == nil {
				c.err = json.Indent(&out, b, "", "  ")
			}
			c.bytes = out.Bytes()
		})
		return c.bytes, c.err
	}
	var out bytes.Buffer
	err := json.Indent(&out, cardJSON(requestBase(r), h.version, i == 1), "", "  ")
	return out.Bytes(), err
}
