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
	return &handler{cfg}
}

type handler struct{ cfg Config }

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
	doc, err := h.document(r, base, q.Get("pageToken"))
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
	body, err := aicatalog.Marshal(doc)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	hd.Set("ETag", tag)
	hd.Set("Cache-Control", "public, max-age=300")
	hd.Set("Content-Type", aicatalog.MediaType)
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
	total := 0
	limit := h.cfg.PageEntries
	for len(doc.Entries) < limit {
		size := min(search.MaxPageSize, limit-len(doc.Entries))
		p, err := h.cfg.Finder.Search(r.Context(), registry.Anonymous,
			discover.Request{PageSize: &size, PageToken: token}, base)
		if err != nil {
			return nil, err
		}
		total = p.TotalSize
		for _, a := range p.Agents {
			doc.Entries = append(doc.Entries, entry(a))
		}
		token = p.NextPageToken
		if token == "" {
			break
		}
	}
	root := map[string]any{"totalSize": total, "api": base + "/api/v1/agents"}
	if token != "" {
		next := base + aicatalog.WellKnownPath + "?pageToken=" + url.QueryEscape(token)
		root["next"] = next
		doc.Entries = append(doc.Entries, aicatalog.Entry{
			Identifier:  "urn:air:" + hostOf(base) + ":catalog:next-" + shortHash(token),
			Type:        aicatalog.MediaType,
			URL:         next,
			Description: "The next page of this catalog.",
		})
	}
	doc.Extensions = map[string]any{Extension: root}
	return doc, nil
}

// entry is one agent as a catalog entry: url is the origin's card (the
// host is the identity), Cardex's copy and verdicts are its extension. A
// card its host gives inline in a catalog has no URL of its own: url is
// Cardex's copy, and the extension names the catalog.
func entry(a discover.Agent) aicatalog.Entry {
	host := hostOf(a.CardURL)
	u := a.CardURL
	if a.CatalogInline {
		u = a.Record + "/card"
	}
	e := aicatalog.Entry{
		Identifier:  "urn:air:" + host + ":agent:" + a.ID,
		Type:        aicatalog.TypeA2ACard,
		URL:         u,
		Description: a.Description,
		Publisher:   &aicatalog.Publisher{Identifier: host, DisplayName: host},
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
	if sum := a.Summary; sum != nil {
		// Result pages carry the card's summary (docs/api.md "Lists and
		// search"); its tags are the card's first distinct ones.
		e.Version = sum.Version
		if sum.Provider != "" {
			e.Publisher.DisplayName = sum.Provider
		}
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

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Hostname()
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
