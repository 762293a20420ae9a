package crawler_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// catalogHost is a loopback host serving an AI Catalog a test rewrites
// between crawls (with an ETag and conditional answers), cards by path
// and a key set, counting requests per path.
type catalogHost struct {
	m       *mutableAgent
	mu      sync.Mutex
	catalog string // "" answers 500
	cards   map[string][]byte
	hits    map[string]int
}

func newCatalogHost(t *testing.T) *catalogHost {
	h := &catalogHost{m: newMutableAgent(t), cards: map[string][]byte{}, hits: map[string]int{}}
	h.m.set(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.Path]++
		body, card := h.catalog, h.cards[r.URL.Path]
		h.mu.Unlock()
		switch {
		case r.URL.Path == aicatalog.WellKnownPath && body == "":
			http.Error(w, "down", http.StatusInternalServerError)
		case r.URL.Path == aicatalog.WellKnownPath:
			sum := sha256.Sum256([]byte(body))
			tag := `"` + hex.EncodeToString(sum[:8]) + `"`
			w.Header().Set("ETag", tag)
			if r.Header.Get("If-None-Match") == tag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Content-Type", aicatalog.MediaType)
			w.Write([]byte(body))
		case card != nil:
			w.Header().Set("Content-Type", "application/json")
			w.Write(card)
		default:
			http.NotFound(w, r)
		}
	})
	return h
}

func (h *catalogHost) url() string { return h.m.Origin() + aicatalog.WellKnownPath }

func (h *catalogHost) serve(entries ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if entries == nil {
		h.catalog = ""
		return
	}
	h.catalog = `{"specVersion":"1.0","entries":[` + strings.Join(entries, ",") + `]}`
}

func (h *catalogHost) hit(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

func urlEntry(id, u string) string {
	return `{"identifier":"` + id + `","type":"` + aicatalog.TypeA2ACard + `","url":"` + u + `"}`
}

func dataEntry(id string, card []byte) string {
	return `{"identifier":"` + id + `","type":"` + aicatalog.TypeA2ACard + `","data":` + string(card) + `}`
}

// recrawl is the crawler's periodic crawl of one catalog: conditional on
// the stored validator, then recorded.
func (st *stack) recrawl(t *testing.T, url string) registry.CatalogRecord {
	t.Helper()
	list, err := st.svc.Catalogs(t.Context(), admin)
	if err != nil {
		t.Fatal(err)
	}
	etag := ""
	for _, c := range list {
		if c.URL == url {
			etag = c.ETag
		}
	}
	rec := st.cat.Crawl(t.Context(), url, etag)
	rec.NextCrawlAt = st.clk.Now().Add(time.Hour)
	out, err := st.svc.RecordCatalog(t.Context(), rec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A catalog submitted by URL registers its URL and inline entries as
// pending agents. An inline card is crawled from the catalog document (no
// request for it), parsed, linted and verified like a fetched card, and
// updated when the catalog changes. An agent whose entry disappears from
// a complete crawl is recorded as missing, as a 404 is, and goes gone by
// the same rule; a failed catalog withdraws nothing; an entry listed
// again recovers. An agent submitted directly is never withdrawn by a
// catalog.
func TestCrawlCatalogAgentsLifecycle(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		h := newCatalogHost(t)
		k := newSigningKey(t)
		h.m.setJWKS(jwks(t, k))
		o := h.m.Origin()
		h.cards["/fx.json"] = agentfleet.GenerateCard(1, o, "1.0.0")
		h.cards["/direct.json"] = agentfleet.GenerateCard(2, o, "1.0.0")
		trips := k.sign(t, agentfleet.GenerateCard(3, o, "1.0.0"), "")
		far := agentfleet.GenerateCard(4, "https://bank.example.org", "1.0.0")
		entries := []string{
			urlEntry("fx", o+"/fx.json"),
			urlEntry("direct", o+"/direct.json"),
			dataEntry("trips", trips),
			dataEntry("far", far),
			dataEntry("nameless", []byte(`{"description":"no name, no endpoint"}`)),
		}
		h.serve(entries...)
		st := newStack(t, store, stackOptions{})
		direct := st.submit(t, o+"/direct.json")
		sub, err := st.svc.SubmitCatalog(t.Context(), registry.Anonymous, h.url(), registry.CatalogBudget{})
		if err != nil {
			t.Fatal(err)
		}
		if sub.Catalog != h.url() || len(sub.Agents) != 2 || sub.Registered != 2 || sub.Domain != "127.0.0.1" {
			t.Fatalf("submission %+v", sub)
		}
		ids := map[string]string{}
		for _, a := range sub.Agents {
			ids[a.CardURL] = a.ID
			if a.Status != registry.StatusPending || a.Catalog != h.url() {
				t.Errorf("agent %+v", a)
			}
		}
		fx, tr := ids[o+"/fx.json"], ids[h.url()+"#trips"]
		if fx == "" || tr == "" {
			t.Fatalf("registered %v", ids)
		}
		for _, want := range []string{`"identifier":"far","type":"` + aicatalog.TypeA2ACard + `","outcome":"off-domain"`,
			`"identifier":"nameless","type":"` + aicatalog.TypeA2ACard + `","outcome":"invalid"`,
			`"outcome":"inline","agent":"` + h.url() + `#trips"`} {
			if !strings.Contains(string(sub.Entries), want) {
				t.Errorf("trace lacks %s:\n%s", want, sub.Entries)
			}
		}
		// Pending agents are not listed to anonymous callers.
		if l, err := st.svc.List(t.Context(), registry.Anonymous, registry.ListQuery{}); err != nil || len(l.Agents) != 0 {
			t.Fatalf("anonymous list %d %v", len(l.Agents), err)
		}

		st.crawl(t, 3) // fx, direct, trips
		a := st.get(t, tr)
		if !a.CatalogInline || a.Card == nil || !strings.Contains(string(trips), `"name":"`+a.Card.Name+`"`) || a.Trust != registry.TrustVerified || a.Health != registry.HealthOK {
			t.Fatalf("inline agent: inline %v card %v trust %s health %s", a.CatalogInline, a.Card != nil, a.Trust, a.Health)
		}
		if f := st.lastFetch(t, tr); f.URL != h.url()+"#trips" || f.ErrorClass != "" || f.Result != registry.ResultNewVersion {
			t.Fatalf("inline fetch %+v", f)
		}
		if h.hit("/trips") != 0 {
			t.Fatal("an inline card was fetched")
		}
		if st.get(t, fx).Health != registry.HealthOK {
			t.Fatal("fx not crawled")
		}

		// Unchanged catalog: a 304, nothing changes, nothing is due.
		if r := st.recrawl(t, h.url()); len(r.Registered)+len(r.Missing)+len(r.Listed) != 0 {
			t.Fatalf("unchanged catalog: %+v", r)
		}
		st.quiet(t)

		// The inline card changes in the catalog: its agent is crawled at
		// once and gets a new version, still verified.
		trips2 := k.sign(t, agentfleet.GenerateCard(3, o, "2.0.0"), "")
		entries[2] = dataEntry("trips", trips2)
		h.serve(entries...)
		st.recrawl(t, h.url())
		st.crawl(t, 1)
		if a := st.get(t, tr); a.Card.Version != "2.0.0" || a.VersionSeq != 2 || a.Trust != registry.TrustVerified {
			t.Fatalf("updated inline: version %s seq %d trust %s", a.Card.Version, a.VersionSeq, a.Trust)
		}

		// The catalog fails (500) and then loses a nested catalog: neither
		// withdraws anything, though the entries are not listed.
		h.serve()
		if r := st.recrawl(t, h.url()); len(r.Missing) != 0 {
			t.Fatalf("a failing catalog withdrew %v", r.Missing)
		}
		h.serve(`{"identifier":"nested","type":"` + aicatalog.MediaType + `","url":"` + o + `/nested.json"}`)
		if r := st.recrawl(t, h.url()); len(r.Missing) != 0 {
			t.Fatalf("a crawl with a failed nested catalog withdrew %v", r.Missing)
		}
		st.quiet(t)
		// A catalog with nested ones is stored without a validator: the
		// root's 304 would hide a change in a nested catalog.
		if list, err := st.svc.Catalogs(t.Context(), admin); err != nil || len(list) != 1 || list[0].ETag != "" {
			t.Fatalf("catalog after a nested crawl: %+v %v", list, err)
		}

		// A complete crawl without fx, trips and direct: fx and trips are
		// missing (direct was submitted directly and stays as it is). The
		// inline card trips has no other source: recorded as missing. fx
		// has a URL of its own: its card is fetched, and as it still
		// loads, leaving the catalog fails nothing (docs/threats.md K.102).
		h.serve(dataEntry("far", far))
		r := st.recrawl(t, h.url())
		if len(r.Missing) != 2 {
			t.Fatalf("missing %v", r.Missing)
		}
		fxHits := h.hit("/fx.json")
		st.crawl(t, 2)
		if a, f := st.get(t, tr), st.lastFetch(t, tr); a.Health != registry.HealthFailing || !a.CatalogMissing || f.ErrorClass != crawler.ClassNotListed || a.Card == nil {
			t.Fatalf("inline agent after delisting: health %s missing %v fetch %+v", a.Health, a.CatalogMissing, f)
		}
		if a, f := st.get(t, fx), st.lastFetch(t, fx); a.Health != registry.HealthOK || !a.CatalogMissing || f.ErrorClass != "" || f.HTTPStatus != 200 {
			t.Fatalf("fx after delisting: health %s missing %v fetch %+v", a.Health, a.CatalogMissing, f)
		}
		if h.hit("/fx.json") != fxHits+1 {
			t.Fatalf("fx's card was fetched %d times after delisting, want 1", h.hit("/fx.json")-fxHits)
		}
		// Two more missing crawls: the inline agent is gone, as after
		// three 404s; fx, whose card loads, stays.
		for range 2 {
			st.later(t, 25*time.Hour, 3)
		}
		if a := st.get(t, tr); a.Health != registry.HealthGone {
			t.Fatalf("inline agent: health %s after three missing crawls", a.Health)
		}
		if a := st.get(t, fx); a.Health != registry.HealthOK || a.Status == registry.StatusRemoved {
			t.Fatalf("fx: health %s status %s after three crawls off its catalog", a.Health, a.Status)
		}
		if a := st.get(t, direct); a.Health != registry.HealthOK || a.CatalogMissing {
			t.Fatalf("the directly submitted agent: %s %v", a.Health, a.CatalogMissing)
		}

		// The entries come back: listed again, crawled at once, recovered.
		h.serve(entries...)
		r = st.recrawl(t, h.url())
		if len(r.Listed) != 2 || len(r.Registered) != 0 {
			t.Fatalf("listed again %+v", r)
		}
		st.crawl(t, 2)
		for _, id := range []string{fx, tr} {
			if a := st.get(t, id); a.Health != registry.HealthOK || a.CatalogMissing {
				t.Fatalf("%s after relisting: %s %v", id, a.Health, a.CatalogMissing)
			}
		}
	})
}

// Catalog submissions that register nothing: bad URLs, reserved
// addresses (literal, and a redirect to one), a document that is not a
// catalog (an agent card), a failing fetch. Nothing is stored.
func TestSubmitCatalogRefusals(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		h := newCatalogHost(t)
		o := h.m.Origin()
		h.cards["/card.json"] = agentfleet.GenerateCard(1, o, "1.0.0")
		h.cards["/moved.json"] = nil
		h.m.set(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/card.json":
				w.Header().Set("Content-Type", "application/json")
				w.Write(agentfleet.GenerateCard(1, o, "1.0.0"))
			case "/moved.json":
				http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
			case "/samehost.json":
				http.Redirect(w, r, "/card.json", http.StatusFound)
			default:
				http.NotFound(w, r)
			}
		})
		st := newStack(t, store, stackOptions{})
		ctx := t.Context()
		for _, c := range []struct {
			url, reason, class, code string
		}{
			{"ftp://example.com/catalog.json", "", "", registry.URLCodeInvalid},
			{"http://169.254.169.254/.well-known/ai-catalog.json", "", "", registry.URLCodeReserved},
			{"https://localhost/catalog.json", "", "", registry.URLCodeReserved},
			{o + "/moved.json", registry.CatalogFetchFailed, fetch.ClassCrossOriginRedirect, ""},
			{o + "/card.json", registry.CatalogNotACatalog, crawler.ClassNotACatalog, ""},
			{o + "/samehost.json", registry.CatalogNotACatalog, crawler.ClassNotACatalog, ""},
			{o + "/missing.json", registry.CatalogFetchFailed, fetch.ClassHTTPStatus, ""},
		} {
			_, err := st.svc.SubmitCatalog(ctx, registry.Anonymous, c.url, registry.CatalogBudget{})
			var ce *registry.CatalogError
			var ue *registry.URLError
			switch {
			case c.code != "":
				if !errors.As(err, &ue) || ue.Code != c.code {
					t.Errorf("%s: %v, want URL error %s", c.url, err, c.code)
				}
			case !errors.As(err, &ce) || ce.Reason != c.reason || ce.ErrorClass != c.class:
				t.Errorf("%s: %v, want %s/%s", c.url, err, c.reason, c.class)
			case strings.Contains(ce.Detail, "169.254") || strings.Contains(ce.Detail, "127.0.0.1"):
				t.Errorf("%s: an anonymous caller sees %q", c.url, ce.Detail)
			}
		}
		if _, err := st.svc.SubmitCatalog(ctx, registry.Anonymous, o+"/card.json", registry.CatalogBudget{}); err == nil ||
			!strings.Contains(err.Error(), "it is an agent card (submit it as a card URL)") {
			t.Errorf("agent card: %v", err)
		}
		if list, err := st.svc.Catalogs(ctx, admin); err != nil || len(list) != 0 {
			t.Fatalf("catalogs stored: %+v %v", list, err)
		}
		if l, err := st.svc.List(ctx, admin, registry.ListQuery{}); err != nil || len(l.Agents) != 0 {
			t.Fatalf("agents stored: %d %v", len(l.Agents), err)
		}
	})
}
