// Package aicatalog is the AI Catalog document format (the
// /.well-known/ai-catalog.json a host publishes to list its agents): the
// one place Cardex reads and writes it, so following the still-moving
// specification is a change here only.
//
// Reading accepts both spellings of an entry's media type: `type` (the
// current one) and `mediaType` (the 2026 spring text). Writing emits `type`.
// An entry's representativeQueries (example questions people would ask to
// find the agent) are read within MaxQueries and MaxQueryBytes; a member of
// the wrong type is ignored, never a problem of the entry. It imports
// nothing of Cardex but the strict JSON parse.
package aicatalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cardexhq/cardex/strictjson"
)

// Names of the format.
const (
	// WellKnownPath is where a host publishes its catalog.
	WellKnownPath = "/.well-known/ai-catalog.json"
	// MediaType is a catalog document's media type, and the entry type
	// of a nested catalog.
	MediaType = "application/ai-catalog+json"
	// TypeA2ACard is the entry type of an A2A agent card.
	TypeA2ACard = "application/a2a-agent-card+json"
	// SpecVersion is the version Cardex writes: the AI Catalog version it
	// implements, never a higher one (docs/discovery.md "Identifiers").
	SpecVersion = "0.9"
	// LinkRel is the link relation that points at a catalog.
	LinkRel = "ai-catalog"
)

// Document is a catalog.
type Document struct {
	SpecVersion string         `json:"specVersion"`
	Host        *Host          `json:"host,omitempty"`
	Entries     []Entry        `json:"entries"`
	Extensions  map[string]any `json:"extensions,omitempty"`
}

// Host describes who publishes the catalog.
type Host struct {
	DisplayName      string `json:"displayName"`
	Identifier       string `json:"identifier,omitempty"`
	DocumentationURL string `json:"documentationUrl,omitempty"`
}

// Entry is one listed artifact: exactly one of URL and Data.
type Entry struct {
	Identifier  string          `json:"identifier"`
	Type        string          `json:"type"`
	URL         string          `json:"url,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	DisplayName string          `json:"displayName,omitempty"`
	Description string          `json:"description,omitempty"`
	Tags        []string        `json:"tags,omitempty"`
	// RepresentativeQueries are example questions people would ask to
	// find the artifact, within MaxQueries and MaxQueryBytes.
	RepresentativeQueries []string       `json:"representativeQueries,omitempty"`
	Version               string         `json:"version,omitempty"`
	UpdatedAt             *time.Time     `json:"updatedAt,omitempty"`
	Publisher             *Publisher     `json:"publisher,omitempty"`
	Extensions            map[string]any `json:"extensions,omitempty"`
}

// Publisher is who publishes an entry.
type Publisher struct {
	Identifier  string `json:"identifier"`
	DisplayName string `json:"displayName"`
}

// Limits bound what Parse reads of an untrusted document.
type Limits struct {
	MaxBytes   int // the document
	MaxEntries int // entries of one document
	MaxDepth   int // JSON nesting
}

// DefaultLimits: a catalog of a thousand agents with inline cards fits;
// anything larger is refused whole, not truncated.
var DefaultLimits = Limits{MaxBytes: 4 << 20, MaxEntries: 1000, MaxDepth: 64}

// Bounds of an entry's representativeQueries: at most MaxQueries are kept,
// in document order, each a non-empty string of at most MaxQueryBytes
// (after trimming spaces); a longer one, a repeat or a value that is not a
// string is dropped, and so are the values past the first MaxQueries kept.
const (
	MaxQueries    = 10
	MaxQueryBytes = 200
)

// MaxNesting is how deep nested catalogs are followed: the specification
// recommends 4 with visited-URL tracking.
const MaxNesting = 4

// Errors of Parse.
var (
	ErrInvalid        = errors.New("aicatalog: not a valid catalog document")
	ErrTooManyEntries = errors.New("aicatalog: too many entries")
)

// Problem is one entry Parse skipped, and why.
type Problem struct {
	Index   int    `json:"index"`
	Message string `json:"message"`
}

// Parse reads a catalog strictly (duplicate members, bad UTF-8, depth and
// size are errors for the whole document) and checks each entry: an entry
// without an identifier, a type, or exactly one of url and data is
// skipped with a Problem, so one bad entry does not hide the others.
func Parse(b []byte, lim Limits) (*Document, []Problem, error) {
	tree, err := strictjson.ParseWithLimits(b, strictjson.Limits{MaxBytes: lim.MaxBytes, MaxDepth: lim.MaxDepth})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if tree.Kind != strictjson.Object {
		return nil, nil, fmt.Errorf("%w: a %s, not an object", ErrInvalid, tree.Kind)
	}
	entries := tree.Get("entries")
	if entries == nil || entries.Kind != strictjson.Array {
		return nil, nil, fmt.Errorf("%w: no entries list", ErrInvalid)
	}
	if len(entries.Array) > lim.MaxEntries {
		return nil, nil, fmt.Errorf("%w: %d, at most %d", ErrTooManyEntries, len(entries.Array), lim.MaxEntries)
	}
	doc := &Document{SpecVersion: str(tree.Get("specVersion")), Entries: []Entry{}}
	if h := tree.Get("host"); h != nil && h.Kind == strictjson.Object {
		doc.Host = &Host{DisplayName: str(h.Get("displayName")), Identifier: str(h.Get("identifier")),
			DocumentationURL: str(h.Get("documentationUrl"))}
	}
	doc.Extensions = extensions(tree.Get("extensions"), b)
	var problems []Problem
	for i, ev := range entries.Array {
		e, msg := entry(ev, b)
		if msg != "" {
			problems = append(problems, Problem{Index: i, Message: msg})
			continue
		}
		doc.Entries = append(doc.Entries, e)
	}
	return doc, problems, nil
}

func entry(v *strictjson.Value, raw []byte) (Entry, string) {
	var e Entry
	if v.Kind != strictjson.Object {
		return e, "an entry must be an object"
	}
	e.Identifier = str(v.Get("identifier"))
	if e.Identifier == "" {
		return e, "identifier is required"
	}
	typ, legacy := str(v.Get("type")), str(v.Get("mediaType"))
	switch {
	case typ != "" && legacy != "" && typ != legacy:
		return e, "type and mediaType disagree"
	case typ == "":
		typ = legacy
	}
	if typ == "" {
		return e, "type is required"
	}
	e.Type = CanonicalType(typ)
	u, d := v.Get("url"), v.Get("data")
	switch {
	case (u == nil) == (d == nil):
		return e, "exactly one of url and data is required"
	case u != nil && u.Kind != strictjson.String:
		return e, "url must be a string"
	case u != nil:
		e.URL = u.String
	case d.Kind != strictjson.Object:
		return e, "data must be an object"
	default:
		e.Data = json.RawMessage(raw[d.Offset:valueEnd(d, raw)])
	}
	e.DisplayName = str(v.Get("displayName"))
	e.Description = str(v.Get("description"))
	e.Version = str(v.Get("version"))
	if t := v.Get("tags"); t != nil && t.Kind == strictjson.Array {
		for _, x := range t.Array {
			if s := str(x); s != "" {
				e.Tags = append(e.Tags, s)
			}
		}
	}
	e.RepresentativeQueries = queries(v.Get("representativeQueries"))
	e.Extensions = extensions(v.Get("extensions"), raw)
	if p := v.Get("publisher"); p != nil && p.Kind == strictjson.Object {
		e.Publisher = &Publisher{Identifier: str(p.Get("identifier")), DisplayName: str(p.Get("displayName"))}
	}
	return e, ""
}

// queries reads a representativeQueries member within MaxQueries and
// MaxQueryBytes: nil when it is absent, not an array, or holds no string
// that fits.
func queries(v *strictjson.Value) []string {
	if v == nil || v.Kind != strictjson.Array {
		return nil
	}
	var out []string
	for _, x := range v.Array {
		q := strings.TrimSpace(str(x))
		if q == "" || len(q) > MaxQueryBytes || slices.Contains(out, q) {
			continue
		}
		if out = append(out, q); len(out) == MaxQueries {
			break
		}
	}
	return out
}

// valueEnd is the offset just past the object v (balanced braces outside
// strings); v came from a successful strict parse of raw.
func valueEnd(v *strictjson.Value, raw []byte) int {
	depth, inStr, esc := 0, false, false
	for i := v.Offset; i < len(raw); i++ {
		c := raw[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(raw)
}

// extensions decodes an extensions object (nil when absent or not one).
func extensions(v *strictjson.Value, raw []byte) map[string]any {
	if v == nil || v.Kind != strictjson.Object {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw[v.Offset:valueEnd(v, raw)], &m) != nil {
		return nil
	}
	return m
}

func str(v *strictjson.Value) string {
	if v == nil || v.Kind != strictjson.String || !utf8.ValidString(v.String) {
		return ""
	}
	return v.String
}

// Marshal writes d in the current form (entries' media type as `type`).
func Marshal(d *Document) ([]byte, error) {
	if d.SpecVersion == "" {
		d.SpecVersion = SpecVersion
	}
	if d.Entries == nil {
		d.Entries = []Entry{}
	}
	return json.MarshalIndent(d, "", "  ")
}

// InlineURL is how Cardex names an entry whose card is given inline (data,
// no url of its own): the URL of the catalog document that carries it,
// with the entry's identifier as the fragment. A card URL never has a
// fragment, so the name cannot collide with a fetched card's.
func InlineURL(documentURL, identifier string) string {
	u, err := url.Parse(documentURL)
	if err != nil {
		return documentURL + "#" + url.PathEscape(identifier)
	}
	u.Fragment, u.RawFragment = identifier, ""
	return u.String()
}

// NamesCatalog reports whether a URL as submitted names a catalog by its
// path: the well-known catalog path is never an agent card.
func NamesCatalog(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && u.Host != "" && strings.TrimSuffix(u.Path, "/") == WellKnownPath
}
