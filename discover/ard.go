package discover

import (
	"math"
	"net/url"

	"github.com/cardexhq/cardex/aicatalog"
)

// Identifier is the AI Catalog identifier of a: its publisher's urn:air
// identifier when its catalog entry gave one, else Cardex's own
// (aicatalog.OwnIdentifier), never a urn:air one in another's namespace
// (docs/discovery.md "Identifiers").
func Identifier(a Agent, base string) string {
	if a.Source != nil && a.Source.URN != "" {
		return a.Source.URN
	}
	return aicatalog.OwnIdentifier(base, a.ID)
}

// ARDIdentifier is the ARD identifier of a: its publisher's urn:air
// identifier when its catalog entry gave one, else Cardex's own urn:air
// name in Cardex's namespace (aicatalog.OwnARDIdentifier).
func ARDIdentifier(a Agent, base string) string {
	if a.Source != nil && a.Source.URN != "" {
		return a.Source.URN
	}
	return aicatalog.OwnARDIdentifier(base, a.ID)
}

// ARDMaxQueries is how many representativeQueries an ARD entry carries:
// ARD asks for 2 to 5, so the first five the publisher gave.
const ARDMaxQueries = 5

// maxARDTags bounds the tags of an entry read from a whole card.
const maxARDTags = 20

// ARDPath is where Cardex's ARD registry API is, under its base URL.
const ARDPath = "/ard"

// ARDEntry is one agent as Cardex's ard.json and its ARD registry API show
// it (docs/discovery.md "ARD").
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

// ARDMetadataKey prefixes the keys of Cardex's members in an entry's
// metadata ("cardex.registry.record", …).
const ARDMetadataKey = "cardex.registry"

// ARD is a as an ARD entry: identified as ARDIdentifier says; url is the
// origin's card (Cardex's copy for a card given inline in a catalog); the
// publisher's representativeQueries (at most ARDMaxQueries); Cardex's
// record, verdicts and the entry's provenance in metadata.
func ARD(a Agent, base string) ARDEntry {
	name := a.Name
	if name == "" {
		name = a.ID
	}
	u := a.CardURL
	if a.CatalogInline {
		u = a.Record + "/card"
	}
	e := ARDEntry{Identifier: ARDIdentifier(a, base), DisplayName: name, Type: aicatalog.TypeA2ACard, URL: u,
		Description: a.Description, RepresentativeQueries: a.CatalogQueries}
	if len(e.RepresentativeQueries) > ARDMaxQueries {
		e.RepresentativeQueries = e.RepresentativeQueries[:ARDMaxQueries]
	}
	switch {
	case a.Summary != nil:
		e.Version = a.Summary.Version
		for _, t := range a.Summary.Tags {
			if !contains(e.Tags, t) {
				e.Tags = append(e.Tags, t)
			}
		}
	case a.Card != nil:
		// One agent read whole (a lookup): the card's skills' tags, as
		// its summary would list them.
		e.Version = a.Card.Version
		for _, sk := range a.Card.Skills {
			for _, t := range sk.Tags {
				if !contains(e.Tags, t) && len(e.Tags) < maxARDTags {
					e.Tags = append(e.Tags, t)
				}
			}
		}
	}
	// ARD's metadata holds scalar values only: Cardex's members are flat,
	// each key under ARDMetadataKey.
	m := map[string]any{}
	put := func(k, v string) {
		if v != "" {
			m[ARDMetadataKey+"."+k] = v
		}
	}
	put("id", a.ID)
	put("record", a.Record)
	put("page", a.Page)
	put("card", a.Record+"/card")
	put("trust", a.Trust)
	put("health", a.Health)
	put("catalog", a.Catalog)
	if src := a.Source; src != nil {
		put("source.document", src.Document)
		put("source.identifier", src.Identifier)
		if p := src.Publisher; p != nil {
			put("source.publisher.identifier", p.Identifier)
			put("source.publisher.displayName", p.DisplayName)
		}
	}
	e.Metadata = m
	return e
}

// RegistryEntry is the entry that names Cardex's ARD registry API: an ARD
// client finds the API through it.
func RegistryEntry(base, name string) ARDEntry {
	return ARDEntry{Identifier: aicatalog.RegistryIdentifier(base), DisplayName: name, Type: aicatalog.TypeRegistry,
		URL: base + ARDPath, Description: "Search the agents " + name + " lists (ARD registry API)."}
}

// ARDScore is an index relevance score as ARD's integer 0–100:
// 100·s/(s+1), rounded. It grows with the score and does not depend on
// the page or on the other hits, so one search's results compare across
// pages; it measures relevance only, never trust (docs/discovery.md
// "ARD registry API").
func ARDScore(s float64) int {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	if math.IsInf(s, 1) {
		return 100
	}
	return int(math.Round(100 * s / (s + 1)))
}

// OwnID is the Cardex id that identifier names when it is one of Cardex's
// own identifiers for an agent at base (aicatalog.OwnIdentifier or
// aicatalog.OwnARDIdentifier), "" otherwise.
func OwnID(identifier, base string) string {
	folded, _ := aicatalog.FoldIdentifier(identifier)
	prefix := aicatalog.OwnARDIdentifier(base, "")
	if len(folded) > len(prefix) && folded[:len(prefix)] == prefix {
		return folded[len(prefix):]
	}
	page := aicatalog.OwnIdentifier(base, "")
	if len(identifier) > len(page) && identifier[:len(page)] == page {
		id, err := url.PathUnescape(identifier[len(page):])
		if err == nil {
			return id
		}
	}
	return ""
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
