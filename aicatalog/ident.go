package aicatalog

import (
	"mime"
	"net/url"
	"strings"
)

// Names of the ARD format (docs/discovery.md "ARD"): the well-known
// document a consumer fetches first, the entry type of a registry's search
// API and the link relation that points at an ARD document.
const (
	ARDWellKnownPath = "/.well-known/ard.json"
	TypeRegistry     = "application/ai-registry+json"
	ARDLinkRel       = "ard"
)

// typeAliases are the spellings of entry media types in use, each mapped
// to the one Cardex reads them as (docs/discovery.md "Media types"). Keys
// are lower case, without parameters.
var typeAliases = map[string]string{
	TypeA2ACard:                           TypeA2ACard,
	"application/agent-card+json":         TypeA2ACard,
	"application/a2a-card+json":           TypeA2ACard,
	"application/a2a+json":                TypeA2ACard,
	"application/vnd.a2a.agent-card+json": TypeA2ACard,
	"application/a2a-agent-card":          TypeA2ACard,
	MediaType:                             MediaType,
	"application/ai-catalog":              MediaType,
	"application/ard+json":                MediaType,
	TypeRegistry:                          TypeRegistry,
	"application/ai-registry":             TypeRegistry,
}

// CanonicalType is the media type an entry's type is read as: a known
// alias (any case, parameters and spaces ignored) is its canonical
// spelling; any other type is lower-cased and kept.
func CanonicalType(t string) string {
	t = strings.TrimSpace(t)
	base := t
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		base = mt
	} else if i := strings.IndexByte(t, ';'); i >= 0 {
		base = t[:i]
	}
	base = strings.ToLower(strings.TrimSpace(base))
	if c, ok := typeAliases[base]; ok {
		return c
	}
	return strings.ToLower(t)
}

// URN prefixes: urn:air: is the current one, urn:ai: the legacy one still
// found in published catalogs. URN schemes and namespace ids are
// case-insensitive (RFC 8141 §3.1); the rest is kept as written.
const (
	airPrefix    = "urn:air:"
	legacyPrefix = "urn:ai:"
)

// FoldIdentifier is the identifier under the current prefix: a urn:ai:
// identifier becomes urn:air: with the rest unchanged, the prefix of a
// urn:air: one is lower-cased, and any other identifier is returned as it
// is. legacy reports a urn:ai: identifier (the original is kept where it
// was read, docs/discovery.md "Identifiers").
func FoldIdentifier(id string) (folded string, legacy bool) {
	switch {
	case len(id) >= len(airPrefix) && strings.EqualFold(id[:len(airPrefix)], airPrefix):
		return airPrefix + id[len(airPrefix):], false
	case len(id) >= len(legacyPrefix) && strings.EqualFold(id[:len(legacyPrefix)], legacyPrefix):
		return airPrefix + id[len(legacyPrefix):], true
	}
	return id, false
}

// IsAIR reports whether id (folded) is a urn:air identifier with a
// publisher segment: the publisher's own name for its entry.
func IsAIR(id string) bool {
	f, _ := FoldIdentifier(id)
	return strings.HasPrefix(f, airPrefix) && AIRPublisher(f) != ""
}

// AIRPublisher is the publisher segment of a urn:air (or urn:ai:)
// identifier, "" for any other identifier or one with no publisher.
func AIRPublisher(id string) string {
	f, _ := FoldIdentifier(id)
	if !strings.HasPrefix(f, airPrefix) {
		return ""
	}
	pub, rest, ok := strings.Cut(f[len(airPrefix):], ":")
	if !ok || rest == "" {
		return ""
	}
	return pub
}

// OwnIdentifier is the AI Catalog identifier Cardex gives an agent whose
// publisher gave none: the URL of the agent's page on Cardex, a name under
// Cardex's control that is not a urn:air one (docs/discovery.md
// "Identifiers").
func OwnIdentifier(base, id string) string {
	return strings.TrimSuffix(base, "/") + "/agents/" + url.PathEscape(id)
}

// OwnARDIdentifier is the ARD identifier Cardex gives an agent whose
// publisher gave none. ARD requires a urn:air identifier for every entry,
// so it is one in Cardex's own namespace: the publisher segment is
// Cardex's host, never the agent's (docs/discovery.md "Identifiers").
func OwnARDIdentifier(base, id string) string {
	return airPrefix + hostOf(base) + ":cardex:" + id
}

// RegistryIdentifier is the ARD identifier of Cardex's own registry API.
func RegistryIdentifier(base string) string {
	return airPrefix + hostOf(base) + ":registry:cardex"
}

// hostOf is the host name of base, without port: a URN's publisher
// segment is a domain name.
func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return "localhost"
	}
	return strings.ReplaceAll(strings.ToLower(u.Hostname()), ":", "-")
}
