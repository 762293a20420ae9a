// Package catalog serves Cardex's own AI Catalog at
// /.well-known/ai-catalog.json (docs/discovery.md "AI Catalog"): the
// approved public agents, each with the origin's card URL and Cardex's
// record, trust, health and publisher, in pages whose last entry is a
// nested catalog pointing at the next page.
package catalog

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// PageEntries is how many agents one catalog document lists at most; the
// next page is a nested catalog entry. A client that wants everything
// follows those, or reads GET /api/v1/agents.
const PageEntries = 500

// Extension is the key of Cardex's extension members (entries and root):
// reverse-DNS, as the format asks of extension keys.
const Extension = "cardex.registry"

// Config is what the catalog surface needs.
type Config struct {
	Finder discover.Finder
	Gate   *discover.Gate
	// BaseURL is Cardex's public URL; empty: the request's origin.
	BaseURL string
	// Name is the catalog's host displayName.
	Name string
	// PageEntries is the page size; 0 is PageEntries.
	PageEntries int
	Logger      *slog.Logger
}

// New returns the handler of aicatalog.WellKnownPath.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Gate == nil {
		cfg.Gate = &discover.Gate{}
	}
	if cfg.PageEntries <= 0 {
		cfg.PageEntries = PageEntries
	}
	if cfg.Name == "" {
		cfg.Name = "Cardex"
	}
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	return &handler{cfg: cfg}
}

// NewARD returns the handler of aicatalog.ARDWellKnownPath: the same
// agents as the AI Catalog, under the same rules, as an ARD document
// (docs/discovery.md "ARD").
func NewARD(cfg Config) http.Handler {
	h := New(cfg).(*handler)
	h.ard = true
	return h
}

type handler struct {
	cfg Config
	ard bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Expose-Headers", "ETag, Retry-After")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		hd.Set("Access-Control-Allow-Methods", "GET, HEAD")
		hd.Set("Access-Control-Allow-Headers", "Authorization, If-None-Match")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hd.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The public catalog is the anonymous view, whoever asks: a token does
	// not turn internal agents into catalog entries. Anonymous requests
	// spend the read budget like any other.
	if _, refusal, err := h.cfg.Gate.Caller(r); err != nil || refusal != nil {
		switch {
		case err != nil:
			http.Error(w, "the registry cannot answer right now", http.StatusServiceUnavailable)
		case refusal.Status == http.StatusTooManyRequests:
			hd.Set("Retry-After", strconv.Itoa(refusal.RetryAfter()))
			http.Error(w, refusal.Message, refusal.Status)
		default:
			hd.Set("WWW-Authenticate", `Bearer realm="cardex"`)
			http.Error(w, refusal.Message, refusal.Status)
		}
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "pageToken" {
			http.Error(w, "unknown parameter "+strconv.Quote(k)+" (the catalog takes pageToken only)", http.StatusBadRequest)
			return
		}
	}
	base := h.cfg.BaseURL
	if base == "" {
		base = requestBase(r)
	}
	var body []byte
	var err error
	if h.ard {
		body, err = h.ardDocument(r, base, q.Get("pageToken"))
	} else {
		var doc *aicatalog.Document
		if doc, err = h.document(r, base, q.Get("pageToken")); err == nil {
			body, err = aicatalog.Marshal(doc)
		}
	}
	var fe *discover.FieldError
	switch {
	case errors.Is(err, search.ErrInvalidPageToken) || errors.As(err, &fe):
		http.Error(w, "pageToken: not issued by this catalog", http.StatusBadRequest)
		return
	case errors.Is(err, search.ErrNotReady), errors.Is(err, search.ErrTimeout), errors.Is(err, search.ErrClosed),
		errors.Is(err, registry.ErrUnavailable):
		hd.Set("Retry-After", "5")
		http.Error(w, "the registry cannot answer right now", http.StatusServiceUnavailable)
		return
	case err != nil:
		h.cfg.Logger.Error("ai catalog", "err", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	hd.Set("ETag", tag)
	hd.Set("Cache-Control", "public, max-age=300")
	if h.ard {
		hd.Set("Content-Type", "application/json")
	} else {
		hd.Set("Content-Type", aicatalog.MediaType)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == tag || inm == "*" || strings.Contains(inm, tag)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		hd.Set("Content-Length", strconv.Itoa(len(body)))
		return
	}
	w.Write(body)
}

// document is one page: up to PageEntries agents in search order (newest
// change first), then, when there are more, a nested catalog entry for
// the next page.
func (h *handler) document(r *http.Request, base, token string) (*aicatalog.Document, error) {
	doc := &aicatalog.Document{SpecVersion: aicatalog.SpecVersion, Entries: []aicatalog.Entry{},
		Host: &aicatalog.Host{DisplayName: h.cfg.Name, Identifier: base, DocumentationURL: base + "/api-reference"}}
	agents, total, token, err := h.page(r, base, token)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		doc.Entries = append(doc.Entries, entry(a, base))
	}
	root := map[string]any{"totalSize": total, "api": base + "/api/v1/agents"}
	if token != "" {
		next := base + aicatalog.WellKnownPath + "?pageToken=" + url.QueryEscape(token)
		root["next"] = next
		doc.Entries = append(doc.Entries, aicatalog.Entry{
			Identifier: next, // Cardex's own name for its own page: no urn:air one

			Type:        aicatalog.MediaType,
			URL:         next,
			Description: "The next page of this catalog.",
		})
	}
	doc.Extensions = map[string]any{Extension: root}
	return doc, nil
}

// page is one page of the anonymous listing: up to PageEntries agents,
// the total, and the token of the next page ("" on the last).
func (h *handler) page(r *http.Request, base, token string) ([]discover.Agent, int, string, error) {
	var out []discover.Agent
	total := 0
	limit := h.cfg.PageEntries
	for len(out) < limit {
		size := min(search.MaxPageSize, limit-len(out))
		p, err := h.cfg.Finder.Search(r.Context(), registry.Anonymous,
			discover.Request{PageSize: &size, PageToken: token}, base)
		if err != nil {
			return nil, 0, "", err
		}
		total = p.TotalSize
		out = append(out, p.Agents...)
		token = p.NextPageToken
		if token == "" {
			break
		}
	}
	return out, total, token, nil
}

// entry is one agent as a catalog entry: url is the origin's card (the
// host is the identity), Cardex's copy and verdicts are its extension. A
// card its host gives inline in a catalog has no URL of its own: url is
// Cardex's copy, and the extension names the catalog.
//
// The identifier is the publisher's own urn:air one, kept exactly, when
// its catalog gave one; otherwise Cardex's own name for the agent, its
// page URL, which is no urn:air identifier (docs/discovery.md
// "Identifiers"). The publisher is the one its catalog entry named, never
// one inferred from a URL.
func entry(a discover.Agent, base string) aicatalog.Entry {
	u := a.CardURL
	if a.CatalogInline {
		u = a.Record + "/card"
	}
	e := aicatalog.Entry{
		Identifier:  discover.Identifier(a, base),
		Type:        aicatalog.TypeA2ACard,
		URL:         u,
		Description: a.Description,
		// The queries of the entry that brought it, as read (bounded).
		RepresentativeQueries: a.CatalogQueries,
		Extensions: map[string]any{Extension: map[string]any{
			"id": a.ID, "record": a.Record, "page": a.Page, "card": a.Record + "/card",
			"trust": a.Trust, "health": a.Health,
		}},
	}
	if a.Catalog != "" {
		e.Extensions[Extension].(map[string]any)["catalog"] = a.Catalog
	}
	if src := a.Source; src != nil {
		e.Extensions[Extension].(map[string]any)["source"] = src
		if p := src.Publisher; p != nil && p.Identifier != "" && p.DisplayName != "" {
			e.Publisher = &aicatalog.Publisher{Identifier: p.Identifier, DisplayName: p.DisplayName}
		}
	}
	if sum := a.Summary; sum != nil {
		// Result pages carry the card's summary (docs/api.md "Lists and
		// search"); its tags are the card's first distinct ones.
		e.Version = sum.Version
		for _, t := range sum.Tags {
			if !contains(e.Tags, t) {
				e.Tags = append(e.Tags, t)
			}
		}
	}
	if a.Liveness != nil {
		e.Extensions[Extension].(map[string]any)["liveness"] = a.Liveness.State
	}
	return e
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
