package crawler_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
)

// catalogSite serves documents by path on one loopback server that the
// injected resolver gives several names (a host, its subdomain, another
// domain, and a name on a reserved address).
type catalogSite struct {
	srv  *httptest.Server
	port string
	docs map[string]string
	mu   sync.Mutex
	hits map[string]int
}

func newCatalogSite(t *testing.T) (*catalogSite, crawler.CatalogCrawler) {
	t.Helper()
	s := &catalogSite{docs: map[string]string{}, hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path]++
		s.mu.Unlock()
		body, ok := s.docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(body, "redirect:") {
			http.Redirect(w, r, strings.TrimPrefix(body, "redirect:"), http.StatusFound)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", aicatalog.MediaType)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.srv.Close)
	_, s.port, _ = strings.Cut(strings.TrimPrefix(s.srv.URL, "http://"), ":")
	res := newResolver()
	for _, h := range []string{"acme.example.com", "a2a.acme.example.com", "other.example.org"} {
		res.Set(h, addrs("127.0.0.1"))
	}
	res.Set("metadata.acme.example.com", addrs("169.254.169.254"))
	return s, crawler.CatalogCrawler{Fetcher: newFetcher(t, fetch.Config{Policy: loopbackPolicy(), Resolver: res})}
}

// u is a URL on the site under a name.
func (s *catalogSite) u(host, path string) string { return "http://" + host + ":" + s.port + path }

func entryJSON(id, typ, url string) string {
	return fmt.Sprintf(`{"identifier":%q,"type":%q,"url":%q}`, id, typ, url)
}

func TestCrawlCatalogTrace(t *testing.T) {
	s, f := newCatalogSite(t)
	card := aicatalog.TypeA2ACard
	s.docs[aicatalog.WellKnownPath] = `{"specVersion":"1.0","entries":[` + strings.Join([]string{
		entryJSON("fx", card, s.u("a2a.acme.example.com", "/fx/card.json")),
		`{"identifier":"old","mediaType":"` + card + `","url":"` + s.u("acme.example.com", "/old.json") + `"}`,
		`{"identifier":"inline","type":"` + card + `","data":{"name":"Travel"}}`,
		entryJSON("stranger", card, s.u("other.example.org", "/card.json")),
		entryJSON("tools", "application/mcp-server+json", s.u("acme.example.com", "/mcp.json")),
		`{"identifier":"broken","type":"` + card + `"}`,
		entryJSON("more", aicatalog.MediaType, s.u("acme.example.com", "/more.json")),
		entryJSON("foreign-catalog", aicatalog.MediaType, s.u("other.example.org", "/cat.json")),
		entryJSON("metadata", aicatalog.MediaType, s.u("metadata.acme.example.com", "/cat.json")),
		`{"identifier":"trips","type":"` + card + `","data":` + inlineCard("Trips", "https://a2a.acme.example.com/trips") + `}`,
		`{"identifier":"phish","type":"` + card + `","data":` + inlineCard("Bank", "https://bank.example.org/a2a") + `}`,
	}, ",") + `]}`
	s.docs["/more.json"] = `{"entries":[` + entryJSON("billing", card, s.u("acme.example.com", "/billing.json")) + `,` +
		entryJSON("back", aicatalog.MediaType, s.u("acme.example.com", aicatalog.WellKnownPath)) + `]}`

	c, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/"), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Entries {
		got = append(got, fmt.Sprintf("%s:%d %s %s", strings.TrimPrefix(e.Catalog, s.u("acme.example.com", "")), e.Index, e.Identifier, e.Outcome))
	}
	wantTrace := strings.Join([]string{
		"/.well-known/ai-catalog.json:5  invalid",
		"/.well-known/ai-catalog.json:0 fx off-origin",
		"/.well-known/ai-catalog.json:1 old agent",
		"/.well-known/ai-catalog.json:2 inline invalid",
		"/.well-known/ai-catalog.json:3 stranger off-domain",
		"/.well-known/ai-catalog.json:4 tools unsupported-type",
		"/.well-known/ai-catalog.json:6 more nested",
		"/more.json:0 billing agent",
		"/more.json:1 back not-followed",
		"/.well-known/ai-catalog.json:7 foreign-catalog off-domain",
		"/.well-known/ai-catalog.json:8 metadata off-origin",
		"/.well-known/ai-catalog.json:9 trips inline",
		"/.well-known/ai-catalog.json:10 phish off-domain",
	}, "\n")
	if strings.Join(got, "\n") != wantTrace {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), wantTrace)
	}
	a := c.Agents()
	if len(a) != 3 || a[0].URL != s.u("acme.example.com", "/old.json") || a[0].Card != nil ||
		a[2].URL != s.u("acme.example.com", aicatalog.WellKnownPath) || a[2].Identifier != "trips" ||
		!strings.HasPrefix(string(a[2].Card), `{"name":"Trips"`) || !strings.HasSuffix(string(a[2].Card), `]}`) {
		t.Fatalf("agents %+v", a)
	}
	// The inline entries: the valid one is registered under the catalog
	// document with its identifier; the card with an endpoint on another
	// domain and the card without an endpoint are traced, not registered.
	byID := map[string]crawler.CatalogEntry{}
	for _, e := range c.Entries {
		byID[e.Identifier] = e
	}
	if e := byID["trips"]; e.Agent != s.u("acme.example.com", aicatalog.WellKnownPath)+"#trips" || e.Message != "" {
		t.Fatalf("inline entry %+v", e)
	}
	if e := byID["phish"]; !strings.Contains(e.Message, "endpoint https://bank.example.org/a2a is on example.org, not example.com") {
		t.Fatalf("off-domain inline entry %+v", e)
	}
	if e := byID["inline"]; !strings.Contains(e.Message, "not a valid agent card") {
		t.Fatalf("invalid inline entry %+v", e)
	}
	// A card URL or a nested catalog on another origin of the domain is
	// not the catalog's to list (docs/threats.md K.102): traced, never
	// fetched.
	if e := byID["fx"]; !strings.Contains(e.Message, "not on "+s.u("acme.example.com", "")) || e.Agent != "" {
		t.Fatalf("off-origin entry %+v", e)
	}
	if len(c.Documents) != 2 || !c.Complete() {
		t.Fatalf("documents %+v", c.Documents)
	}
	s.mu.Lock()
	for hit := range s.hits {
		if strings.HasPrefix(hit, "other.example.org") || strings.HasPrefix(hit, "metadata.") || strings.HasPrefix(hit, "a2a.") {
			t.Errorf("an off-domain URL was fetched: %s", hit)
		}
	}
	s.mu.Unlock()
	if !strings.Contains(c.Entries[4].Message, "on example.org, not example.com") {
		t.Fatalf("off-domain message %q", c.Entries[4].Message)
	}

	// Conditional: the stored ETag gets a 304 and reads nothing.
	c2, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", aicatalog.WellKnownPath), `"v1"`)
	if err != nil || len(c2.Documents) != 1 || !c2.Documents[0].NotModified || len(c2.Entries) != 0 || c2.Complete() {
		t.Fatalf("conditional: %+v %v", c2, err)
	}
	// A catalog whose documents all read is complete.
	s.docs["/small.json"] = `{"entries":[` + entryJSON("fx", card, s.u("acme.example.com", "/fx.json")) + `]}`
	if c3, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/small.json"), ""); err != nil || !c3.Complete() {
		t.Fatalf("small: %+v %v", c3, err)
	}
}

func inlineCard(name, endpoint string) string {
	return `{"name":"` + name + `","description":"d","version":"1.0.0","supportedInterfaces":[{"url":"` + endpoint +
		`","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
}

// A document that is not a catalog is not_a_catalog, and an agent card
// given as a catalog says so; too many entries is too_large.
func TestCrawlCatalogNotACatalog(t *testing.T) {
	s, f := newCatalogSite(t)
	s.docs["/card.json"] = inlineCard("FX", "https://acme.example.com/a2a")
	s.docs["/list.json"] = `[1,2]`
	for path, want := range map[string]string{
		"/card.json": "it is an agent card (submit it as a card URL)",
		"/list.json": "not an object",
	} {
		_, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", path), "")
		if fetch.ClassOf(err) != crawler.ClassNotACatalog || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", path, err)
		}
	}
	many := `{"entries":[` + strings.Repeat(`{"identifier":"e","type":"`+aicatalog.TypeA2ACard+`","url":"https://acme.example.com/x"},`, 1001)
	s.docs["/many.json"] = strings.TrimSuffix(many, ",") + `]}`
	if _, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/many.json"), ""); fetch.ClassOf(err) != fetch.ClassTooLarge {
		t.Errorf("many: %v", err)
	}
}

func TestCrawlCatalogHostile(t *testing.T) {
	s, f := newCatalogSite(t)
	card := aicatalog.TypeA2ACard
	var b strings.Builder
	b.WriteString(`{"entries":[`)
	for i := range 10_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"identifier":"e%d","type":%q,"url":"https://acme.example.com/%d"}`, i, card, i)
	}
	b.WriteString(`]}`)
	s.docs["/huge.json"] = b.String()
	if _, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/huge.json"), ""); err == nil {
		t.Fatal("a 10k-entry catalog was read")
	}
	many := `{"entries":[` + strings.Repeat(`{"identifier":"e","type":"`+card+`","url":"https://acme.example.com/x"},`, 1500)
	s.docs["/many.json"] = strings.TrimSuffix(many, ",") + `]}`
	if _, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/many.json"), ""); !errors.Is(err, aicatalog.ErrTooManyEntries) {
		t.Fatalf("1500 entries: %v", err)
	}
	s.docs["/deep.json"] = `{"entries":[{"identifier":"x","type":"` + card + `","data":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100) + `}]}`
	if _, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/deep.json"), ""); !errors.Is(err, aicatalog.ErrInvalid) {
		t.Fatalf("deep JSON: %v", err)
	}
	// Nested catalogs: followed at most MaxNesting deep.
	for i := 1; i <= 6; i++ {
		s.docs[fmt.Sprintf("/d%d.json", i)] = `{"entries":[` + entryJSON(fmt.Sprintf("d%d", i+1), aicatalog.MediaType,
			s.u("acme.example.com", fmt.Sprintf("/d%d.json", i+1))) + `]}`
	}
	c, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/d1.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Documents) != aicatalog.MaxNesting || c.Entries[len(c.Entries)-1].Outcome != crawler.CatalogNotFollowed {
		t.Fatalf("nesting: %d documents, trace %+v", len(c.Documents), c.Entries)
	}
	// A redirect to a name on a reserved address is refused (another
	// origin, and a reserved address, either refuses it).
	s.docs["/moved.json"] = "redirect:" + s.u("metadata.acme.example.com", "/cat.json")
	if _, err := f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/moved.json"), ""); err == nil {
		t.Fatal("a redirect to a reserved address was followed")
	}
	// A catalog of 200 nested catalogs: at most MaxCatalogDocuments are
	// fetched, and the crawl is cut short, so it withdraws nothing.
	var fan []string
	for i := range 200 {
		p := fmt.Sprintf("/fan/%d.json", i)
		s.docs[p] = `{"entries":[` + entryJSON(fmt.Sprintf("a%d", i), card, s.u("acme.example.com", p+".card")) + `]}`
		fan = append(fan, entryJSON(fmt.Sprintf("n%d", i), aicatalog.MediaType, s.u("acme.example.com", p)))
	}
	s.docs["/fan.json"] = `{"entries":[` + strings.Join(fan, ",") + `]}`
	c, err = f.CrawlCatalog(t.Context(), s.u("acme.example.com", "/fan.json"), "")
	if err != nil || len(c.Documents) != crawler.MaxCatalogDocuments || !c.Truncated || c.Complete() ||
		len(c.Agents()) != crawler.MaxCatalogDocuments-1 {
		t.Fatalf("fan-out: %d documents, truncated %v, %d agents, %v", len(c.Documents), c.Truncated, len(c.Agents()), err)
	}
	s.mu.Lock()
	fetched := 0
	for hit := range s.hits {
		if strings.Contains(hit, "/fan/") {
			fetched++
		}
	}
	s.mu.Unlock()
	if fetched != crawler.MaxCatalogDocuments-1 {
		t.Fatalf("fan-out fetched %d nested catalogs", fetched)
	}
	if _, err := f.CrawlCatalog(t.Context(), "ftp://acme.example.com/", ""); !errors.Is(err, crawler.ErrNotCatalogURL) {
		t.Fatalf("ftp: %v", err)
	}
}
