package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// searchHarness is the API harness with a real index in t.TempDir(), kept in
// step by the real indexer following the real registry's change log. Tests
// call sync where the server's indexer would have run; not calling it leaves
// the index behind SQL on purpose (G.72).
type searchHarness struct {
	*harness
	idx *search.Index
	ix  *search.Indexer
}

func newSearchHarness(t *testing.T, store *registry.Store, opts ...func(*Config)) *searchHarness {
	t.Helper()
	sh := &searchHarness{}
	withIndex := func(cfg *Config) {
		idx, err := search.Open(filepath.Join(t.TempDir(), "index"), search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := idx.Close(); err != nil {
				t.Error(err)
			}
		})
		src := cfg.Service.IndexSource()
		if err := idx.Rebuild(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		sh.idx = idx
		sh.ix = search.NewIndexer(idx, src, search.IndexerOptions{})
		cfg.Search = idx
		cfg.Reindex = func(ctx context.Context) error {
			if err := idx.Rebuild(ctx, src); err != nil {
				return err
			}
			return sh.ix.Sync(ctx)
		}
	}
	sh.harness = newHarness(t, store, append([]func(*Config){withIndex}, opts...)...)
	return sh
}

// sync brings the index up to date with the change log.
func (h *searchHarness) sync() {
	h.t.Helper()
	if err := h.ix.Sync(h.ctx()); err != nil {
		h.t.Fatal(err)
	}
}

// skill is one skill of a test card.
type skill struct {
	id, name, description string
	tags                  []string
}

// testCard describes a card; cardJSON renders it as an A2A v1.0 card that the
// real parser accepts.
type testCard struct {
	name, description, provider string
	skills                      []skill
	inputModes                  []string
	streaming                   bool
	scheme                      string // "", "apiKey" or "oauth2"
	extension                   string // a capabilities.extensions URI, or ""
}

func (c testCard) json(host string) []byte {
	skills := make([]map[string]any, 0, len(c.skills))
	for _, s := range c.skills {
		skills = append(skills, map[string]any{"id": s.id, "name": s.name, "description": s.description, "tags": s.tags})
	}
	modes := c.inputModes
	if modes == nil {
		modes = []string{"text/plain"}
	}
	caps := map[string]any{"streaming": c.streaming}
	if c.extension != "" {
		caps["extensions"] = []map[string]any{{"uri": c.extension}}
	}
	card := map[string]any{
		"name":        c.name,
		"description": c.description,
		"version":     "1.0.0",
		"supportedInterfaces": []map[string]any{
			{"url": "https://" + host + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
		},
		"provider":           map[string]any{"organization": c.provider, "url": "https://" + host + "/"},
		"capabilities":       caps,
		"defaultInputModes":  modes,
		"defaultOutputModes": []string{"text/plain"},
		"skills":             skills,
	}
	switch c.scheme {
	case "apiKey":
		card["securitySchemes"] = map[string]any{"key": map[string]any{"apiKeySecurityScheme": map[string]any{"location": "header", "name": "X-Key"}}}
	case "oauth2":
		card["securitySchemes"] = map[string]any{"oauth": map[string]any{"oauth2SecurityScheme": map[string]any{
			"flows": map[string]any{"clientCredentials": map[string]any{"tokenUrl": "https://" + host + "/token", "scopes": map[string]any{}}}}}}
	}
	b, err := json.Marshal(card)
	if err != nil {
		panic(err)
	}
	return b
}

// publish submits https://host/, records card as its first version and,
// when approve, approves it.
func (h *searchHarness) publish(host string, c testCard, admin string, approve bool) registry.Agent {
	h.t.Helper()
	// A second apart, so sort=updated has an order to show.
	h.svcClock.Advance(time.Second)
	a := h.submit("https://"+host+"/", "")
	h.fetch(a.ID, c.json(host))
	if approve {
		h.do(req{method: "POST", path: "/api/v1/agents/" + a.ID + "/approve", token: admin, body: jsonBody(`{"versionSeq":1}`)}).
			expectStatus(h.t, http.StatusOK)
	}
	return a
}

// searchPageJSON is a decoded GET /api/v1/agents answer.
type searchPageJSON struct {
	Agents        []searchAgentJSON `json:"agents"`
	NextPageToken string            `json:"nextPageToken"`
	TotalSize     int               `json:"totalSize"`
	Facets        *search.Facets    `json:"facets"`
}

type searchAgentJSON struct {
	listItem
	Matches []search.Match `json:"matches"`
}

func (h *searchHarness) list(query, token string) searchPageJSON {
	h.t.Helper()
	r := h.do(req{method: "GET", path: "/api/v1/agents?" + query, token: token})
	r.expectStatus(h.t, http.StatusOK)
	var p searchPageJSON
	r.json(h.t, &p)
	return p
}

func (p searchPageJSON) ids() []string {
	out := make([]string, len(p.Agents))
	for i, a := range p.Agents {
		out[i] = a.ID
	}
	return out
}

// walk pages through GET /api/v1/agents?query with pageSize 100 and returns
// every id listed, sorted; it fails on an id listed twice.
func (h *searchHarness) walk(query, token string) []string {
	h.t.Helper()
	var out []string
	tok := ""
	for range 1000 {
		q := query + "&pageSize=100"
		if tok != "" {
			q += "&pageToken=" + url.QueryEscape(tok)
		}
		p := h.list(q, token)
		for _, id := range p.ids() {
			if slices.Contains(out, id) {
				h.t.Fatalf("agent %s listed twice", id)
			}
			out = append(out, id)
		}
		if tok = p.NextPageToken; tok == "" {
			slices.Sort(out)
			return out
		}
	}
	h.t.Fatal("more than 1000 pages")
	return nil
}

func sortedIDs(agents ...registry.Agent) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.ID
	}
	slices.Sort(out)
	return out
}
