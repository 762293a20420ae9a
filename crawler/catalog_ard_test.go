package crawler_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
)

func (s *catalogSite) hitsOf(host, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[host+":"+s.port+path]
}

// docs/discovery.md "Resolving a host": a host's ARD document is read
// first, its AI Catalog only when the ARD document is not there; either
// well-known name submitted means the host.
func TestCrawlARDResolution(t *testing.T) {
	card := aicatalog.TypeA2ACard
	ardDoc := `{"entries":[` + `{"identifier":"urn:air:acme.example.com:agent:fx","displayName":"FX","type":"application/a2a-agent-card+json","url":"%s","representativeQueries":["convert euros"]}]}`
	catDoc := `{"specVersion":"0.9","entries":[` + `{"identifier":"urn:air:acme.example.com:agent:old","type":"` + card + `","url":"%s"}]}`
	for _, tc := range []struct {
		name, ard, cat string
		wantDoc        string
		superseded     bool
		wantAgent      string
	}{
		{name: "ard.json only", ard: ardDoc, wantDoc: aicatalog.ARDWellKnownPath, wantAgent: "/fx.json"},
		{name: "ai-catalog.json only", cat: catDoc, wantDoc: aicatalog.WellKnownPath, superseded: true, wantAgent: "/old.json"},
		{name: "both: ard.json wins", ard: ardDoc, cat: catDoc, wantDoc: aicatalog.ARDWellKnownPath, wantAgent: "/fx.json"},
		{name: "ard.json answers a web page", ard: "<!doctype html><html>Welcome</html>", cat: catDoc, wantDoc: aicatalog.WellKnownPath, superseded: true, wantAgent: "/old.json"},
	} {
		for _, submitted := range []string{aicatalog.WellKnownPath, aicatalog.ARDWellKnownPath} {
			t.Run(tc.name+" via "+submitted, func(t *testing.T) {
				s, f := newCatalogSite(t)
				if tc.ard != "" {
					s.docs[aicatalog.ARDWellKnownPath] = strings.ReplaceAll(tc.ard, "%s", s.u("acme.example.com", "/fx.json"))
				}
				if tc.cat != "" {
					s.docs[aicatalog.WellKnownPath] = strings.ReplaceAll(tc.cat, "%s", s.u("acme.example.com", "/old.json"))
				}
				c, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", submitted), "")
				if err != nil {
					t.Fatal(err)
				}
				want := s.u("acme.example.com", tc.wantDoc)
				if len(c.Documents) != 1 || c.Documents[0].URL != want || !c.Complete() || (c.Superseded != nil) != tc.superseded {
					t.Fatalf("documents %+v superseded %+v", c.Documents, c.Superseded)
				}
				if tc.superseded && c.Superseded.URL != s.u("acme.example.com", aicatalog.ARDWellKnownPath) {
					t.Fatalf("superseded %+v", c.Superseded)
				}
				ag := c.Agents()
				if len(ag) != 1 || ag[0].URL != s.u("acme.example.com", tc.wantAgent) || ag[0].Document != want {
					t.Fatalf("agents %+v", ag)
				}
				// The AI Catalog is not fetched when the ARD document answers.
				if n := s.hitsOf("acme.example.com", aicatalog.WellKnownPath); (n == 1) != tc.superseded || n > 1 {
					t.Fatalf("ai-catalog.json fetched %d times", n)
				}
				if tc.wantAgent == "/fx.json" && strings.Join(ag[0].Queries, "|") != "convert euros" {
					t.Fatalf("queries %v", ag[0].Queries)
				}
			})
		}
	}
	// A host with neither fails with the AI Catalog's answer, and a
	// catalog named by another path is read as given.
	s, f := newCatalogSite(t)
	if _, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/"), ""); fetch.ClassOf(err) != fetch.ClassHTTPStatus ||
		s.hitsOf("acme.example.com", aicatalog.ARDWellKnownPath) != 1 || s.hitsOf("acme.example.com", aicatalog.WellKnownPath) != 1 {
		t.Fatalf("neither: %v", err)
	}
	s.docs["/team.json"] = fmt.Sprintf(catDoc, s.u("acme.example.com", "/old.json"))
	if c, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/team.json"), ""); err != nil || c.Superseded != nil ||
		s.hitsOf("acme.example.com", aicatalog.ARDWellKnownPath) != 1 {
		t.Fatalf("a catalog by path: %+v %v", c, err)
	}
}

// docs/discovery.md "Identifiers", "Media types": what the crawl keeps of
// each entry's identifier and publisher, the media type spellings in use,
// nested documents and entries of other origins.
func TestCrawlARDIdentifiersAndTypes(t *testing.T) {
	s, f := newCatalogSite(t)
	on := func(p string) string { return s.u("acme.example.com", p) }
	entry := func(id, typ, url, extra string) string {
		return fmt.Sprintf(`{"identifier":%q,"displayName":"x","type":%q,"url":%q%s}`, id, typ, url, extra)
	}
	s.docs[aicatalog.ARDWellKnownPath] = `{"entries":[` + strings.Join([]string{
		entry("urn:ai:acme.example.com:agent:legacy", "application/agent-card+json", on("/legacy.json"),
			`,"publisher":{"identifier":"did:web:acme.example.com","displayName":"Acme"}`),
		entry("urn:air:google.com:agent:tax", "Application/A2A-Agent-Card+JSON; charset=utf-8", on("/squat.json"), ""),
		entry("https://acme.example.com/agents/plain", "application/a2a+json", on("/plain.json"), ""),
		entry("urn:air:sub.acme.example.com:agent:sub", aicatalog.TypeA2ACard, on("/sub.json"), ""),
		entry("urn:air:acme.example.com:agent:elsewhere", aicatalog.TypeA2ACard, s.u("a2a.acme.example.com", "/card.json"), ""),
		entry("urn:air:acme.example.com:agent:foreign", aicatalog.TypeA2ACard, s.u("other.example.org", "/card.json"), ""),
		entry("urn:air:acme.example.com:catalog:team", "application/ai-catalog", on("/team.json"), ""),
		entry("urn:air:acme.example.com:mcp:tools", "application/mcp-server-card+json", on("/mcp.json"), ""),
	}, ",") + `]}`
	s.docs["/team.json"] = `{"entries":[` + entry("urn:AI:acme.example.com:team:a", aicatalog.TypeA2ACard, on("/team/a.json"), "") + `]}`
	c, err := f.CrawlCatalog(t.Context(), on("/"), "")
	if err != nil {
		t.Fatal(err)
	}
	type kept struct{ URL, Identifier, URN, Document, Publisher string }
	var got []kept
	for _, a := range c.Agents() {
		k := kept{a.URL, a.Identifier, a.URN, a.Document, ""}
		if a.Publisher != nil {
			k.Publisher = a.Publisher.Identifier + "/" + a.Publisher.DisplayName
		}
		got = append(got, k)
	}
	root := on(aicatalog.ARDWellKnownPath)
	want := []kept{
		{on("/legacy.json"), "urn:ai:acme.example.com:agent:legacy", "urn:air:acme.example.com:agent:legacy", root, "did:web:acme.example.com/Acme"},
		{on("/squat.json"), "urn:air:google.com:agent:tax", "", root, ""},
		{on("/plain.json"), "https://acme.example.com/agents/plain", "", root, ""},
		{on("/sub.json"), "urn:air:sub.acme.example.com:agent:sub", "urn:air:sub.acme.example.com:agent:sub", root, ""},
		{on("/team/a.json"), "urn:AI:acme.example.com:team:a", "urn:air:acme.example.com:team:a", on("/team.json"), ""},
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Fatalf("agents\n got %s\nwant %s", gj, wj)
	}
	outcomes := map[string]string{}
	for _, e := range c.Entries {
		outcomes[e.Identifier] = e.Outcome
	}
	for id, o := range map[string]string{
		"urn:air:acme.example.com:agent:elsewhere": crawler.CatalogOffOrigin,
		"urn:air:acme.example.com:agent:foreign":   crawler.CatalogOffDomain,
		"urn:air:acme.example.com:catalog:team":    crawler.CatalogNested,
		"urn:air:acme.example.com:mcp:tools":       crawler.CatalogUnsupported,
		"urn:air:google.com:agent:tax":             crawler.CatalogAgent,
	} {
		if outcomes[id] != o {
			t.Errorf("%s: outcome %q, want %q", id, outcomes[id], o)
		}
	}
	if s.hitsOf("a2a.acme.example.com", "/card.json")+s.hitsOf("other.example.org", "/card.json") != 0 {
		t.Fatal("an entry on another origin was fetched")
	}
}

// An absent ARD document whose answer names the host's ARD document
// elsewhere (Link: <…>; rel="ard") is followed there, on the same origin
// only, before the AI Catalog; a link that leads nowhere falls back to it.
func TestCrawlARDRelLink(t *testing.T) {
	for _, tc := range []struct {
		name, link, want string
	}{
		{"same origin", `</ard/main.json>; rel="ard"`, "/ard/main.json"},
		{"several links", `<https://acme.example.com/x>; rel="alternate", </ard/main.json>; rel="service ard"`, "/ard/main.json"},
		{"another origin", `<http://a2a.acme.example.com:PORT/ard/main.json>; rel="ard"`, aicatalog.WellKnownPath},
		{"leads nowhere", `</ard/none.json>; rel="ard"`, aicatalog.WellKnownPath},
		{"no link", "", aicatalog.WellKnownPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newCatalogSite(t)
			inner := s.srv.Config.Handler
			s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == aicatalog.ARDWellKnownPath && tc.link != "" {
					w.Header().Set("Link", strings.ReplaceAll(tc.link, "PORT", s.port))
				}
				inner.ServeHTTP(w, r)
			})
			doc := `{"entries":[` + entryJSON("urn:air:acme.example.com:agent:fx", aicatalog.TypeA2ACard, s.u("acme.example.com", "/fx.json")) + `]}`
			s.docs["/ard/main.json"] = doc
			s.docs[aicatalog.WellKnownPath] = doc
			c, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/"), "")
			if err != nil || len(c.Documents) != 1 || c.Documents[0].URL != s.u("acme.example.com", tc.want) || !c.Complete() ||
				c.Superseded == nil || len(c.Agents()) != 1 {
				t.Fatalf("%+v %v", c, err)
			}
			if s.hitsOf("a2a.acme.example.com", "/ard/main.json") != 0 {
				t.Fatal("a link to another origin was followed")
			}
		})
	}
}
