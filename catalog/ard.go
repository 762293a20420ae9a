package catalog

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/discover"
)

// ARDSpecVersion is the ARD version Cardex's ard.json follows. ARD's
// document is {"entries": […]}; the specVersion member is written beside
// it so that validators of the July text, which require one, read the
// document too (docs/discovery.md "ARD").
const ARDSpecVersion = "0.91"

// ARDMaxQueries is how many representativeQueries an ARD entry carries:
// ARD asks for 2 to 5, so the first five the publisher gave.
const ARDMaxQueries = 5

// ARDEntry is one entry of Cardex's ard.json and of its ARD registry API
// (package api answers with the same shape).
type ARDEntry struct {
	Identifier            string         `json:"identifier"`
	DisplayName           string         `json:"displayName"`
	Type                  string         `json:"type"`
	URL                   string         `json:"url"`
	Description           string         `json:"description,omitempty"`
	Tags                  []string       `json:"tags,omitempty"`
	Version               string         `json:"version,omitempty"`
	RepresentativeQueries []string       `json:"representativeQueries,omitempty"`
	Metadata              map[string]any `json:"metadata,omitempty"`
}

// ARDDocument is ard.json.
type ARDDocument struct {
	SpecVersion string     `json:"specVersion"`
	Entries     []ARDEntry `json:"entries"`
}

// ARDPath is where Cardex's ARD registry API is, under its base URL.
const ARDPath = "/ard"

// RegistryEntry is the entry that names Cardex's ARD registry API: an
// ARD client finds the API through it.
func RegistryEntry(base, name string) ARDEntry {
	return ARDEntry{Identifier: aicatalog.RegistryIdentifier(base), DisplayName: name, Type: aicatalog.TypeRegistry,
		URL: base + ARDPath, Description: "Search the agents " + name + " lists (ARD registry API)."}
}

// ARD is agent a as an ARD entry: identified as ARDIdentifier says, with
// the publisher's representativeQueries (at most ARDMaxQueries), and
// Cardex's record and verdicts in metadata.
func ARD(a discover.Agent, base string) ARDEntry {
	e := entry(a, base)
	name := a.Name
	if name == "" {
		name = a.ID
	}
	out := ARDEntry{Identifier: ARDIdentifier(a, base), DisplayName: name, Type: e.Type, URL: e.URL,
		Description: e.Description, Tags: e.Tags, Version: e.Version,
		Metadata: e.Extensions}
	if qs := e.RepresentativeQueries; len(qs) > ARDMaxQueries {
		out.RepresentativeQueries = qs[:ARDMaxQueries]
	} else {
		out.RepresentativeQueries = qs
	}
	return out
}

// ardDocument is one page of ard.json: on the first page the registry
// entry, then the agents, then, when there are more, an entry for the
// next page.
func (h *handler) ardDocument(r *http.Request, base, token string) ([]byte, error) {
	doc := ARDDocument{SpecVersion: ARDSpecVersion, Entries: []ARDEntry{}}
	if token == "" {
		doc.Entries = append(doc.Entries, RegistryEntry(base, h.cfg.Name))
	}
	agents, _, next, err := h.page(r, base, token)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		doc.Entries = append(doc.Entries, ARD(a, base))
	}
	if next != "" {
		doc.Entries = append(doc.Entries, ARDEntry{
			Identifier:  "urn:air:" + aicatalog.AIRPublisher(aicatalog.RegistryIdentifier(base)) + ":catalog:next-" + shortHash(next),
			DisplayName: "More agents (next page)", Type: aicatalog.MediaType,
			URL: base + aicatalog.ARDWellKnownPath + "?pageToken=" + url.QueryEscape(next)})
	}
	return json.MarshalIndent(doc, "", "  ")
}
