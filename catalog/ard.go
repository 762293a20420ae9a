package catalog

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/discover"
)

// ARDSpecVersion is the specVersion member of Cardex's ard.json: ARD
// v0.91's document is {"entries": […]}, and its July text's manifest,
// whose schema and validators still require specVersion, carries "1.0",
// the manifest format's version in every ARD example (docs/discovery.md
// "ARD"). It is not the AI Catalog version (aicatalog.SpecVersion).
const ARDSpecVersion = "1.0"

// ARDDocument is ard.json.
type ARDDocument struct {
	SpecVersion string              `json:"specVersion"`
	Entries     []discover.ARDEntry `json:"entries"`
}

// ardDocument is one page of ard.json: on the first page the entry of
// Cardex's ARD registry API, then the agents, then, when there are more,
// an entry for the next page.
func (h *handler) ardDocument(r *http.Request, base, token string) ([]byte, error) {
	doc := ARDDocument{SpecVersion: ARDSpecVersion, Entries: []discover.ARDEntry{}}
	if token == "" {
		doc.Entries = append(doc.Entries, discover.RegistryEntry(base, h.cfg.Name))
	}
	agents, _, next, err := h.page(r, base, token)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		doc.Entries = append(doc.Entries, discover.ARD(a, base))
	}
	if next != "" {
		// ARD names every entry by a urn:air identifier: the next page is
		// Cardex's own, in Cardex's namespace.
		doc.Entries = append(doc.Entries, discover.ARDEntry{
			Identifier:  "urn:air:" + aicatalog.AIRPublisher(aicatalog.RegistryIdentifier(base)) + ":catalog:next-" + shortHash(next),
			DisplayName: "More agents (next page)", Type: aicatalog.MediaType,
			URL: base + aicatalog.ARDWellKnownPath + "?pageToken=" + url.QueryEscape(next)})
	}
	return json.MarshalIndent(doc, "", "  ")
}
