package api

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
)

// catalogSite is a loopback site named site.example.com (nameResolver)
// serving catalogs by path, counting requests per path.
type catalogSite struct {
	origin string
	mu     sync.Mutex
	docs   map[string]string
	hits   map[string]int
}

func newCatalogSite(t *testing.T) *catalogSite {
	s := &catalogSite{docs: map[string]string{}, hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		doc, ok := s.docs[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", aicatalog.MediaType)
		w.Write([]byte(doc))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	s.origin = "http://site.example.com:" + port
	return s
}

// serve sets the catalog at path: n card URL entries named prefix0… on
// the site's origin, then the nested catalogs given.
func (s *catalogSite) serve(path, prefix string, n int, nested ...string) {
	var entries []string
	for i := range n {
		entries = append(entries, fmt.Sprintf(`{"identifier":"%s%d","type":%q,"url":"%s/%s%d.json"}`, prefix, i, aicatalog.TypeA2ACard, s.origin, prefix, i))
	}
	for _, p := range nested {
		entries = append(entries, fmt.Sprintf(`{"identifier":"nested%s","type":%q,"url":"%s%s"}`, p, aicatalog.MediaType, s.origin, p))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[path] = `{"specVersion":"1.0","entries":[` + strings.Join(entries, ",") + `]}`
}

func (s *catalogSite) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func loopbackCatalogFetcher(t *testing.T) (*fetch.Fetcher, []netip.Prefix) {
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	pol.Timeout = 5 * time.Second
	f, err := fetch.New(fetch.Config{Policy: pol, Resolver: nameResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f, pol.AllowNetworks
}

type floodAnswer struct {
	Catalog    string `json:"catalog"`
	Registered int    `json:"registered"`
	Withheld   int    `json:"withheld"`
	Known      bool   `json:"known"`
	Agents     []struct{ ID, CardURL, Status string }
	Entries    []struct{ Identifier, Outcome, Message, Agent string }
}

// outcomes counts a trace's entries by outcome, and by message for the
// withheld ones.
func (a floodAnswer) outcomes(t *testing.T, withheld map[string]int) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, e := range a.Entries {
		n[e.Outcome]++
		if e.Outcome != registry.CatalogWithheld {
			continue
		}
		found := false
		for part := range withheld {
			if strings.Contains(e.Message, part) {
				withheld[part]--
				found = true
			}
		}
		if !found {
			t.Errorf("withheld entry %s: unexpected reason %q", e.Identifier, e.Message)
		}
	}
	for part, left := range withheld {
		if left != 0 {
			t.Errorf("%d withheld entries too many or too few say %q", -left, part)
		}
	}
	return n
}

// A catalog flood is bounded (docs/threats.md K.97): one anonymous
// catalog (with a nested one) of 12 agents registers --catalog-max-new of
// them, the rest traced withheld; submitting it again is idempotent (200,
// nothing fetched, registered or spent); the scheduled crawl registers more
// up to --catalog-max-agents, spending the domain's budget; each agent
// spends one unit of the submitter's budget, so a second catalog registers
// what is left of it and a third is 429 before anything is fetched. The
// 12 agents registered on today's code, twice, are 5 here.
func TestCatalogFloodBounded(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		site := newCatalogSite(t)
		site.serve(aicatalog.WellKnownPath, "a", 6, "/more.json")
		site.serve("/more.json", "m", 6)
		f, nets := loopbackCatalogFetcher(t)
		lims := ratelimit.NewLimiters(ratelimit.Limits{
			SubmitPerAddress: ratelimit.Rate{N: 7, Per: time.Hour},
			SubmitPerDomain:  ratelimit.Rate{N: 20, Per: time.Hour},
		}, 0)
		h := newHarnessWith(t, store, func(c *registry.ServiceConfig) {
			c.URLPolicy = registry.URLPolicy{AllowInsecureHTTP: true, AllowNetworks: nets}
			c.CatalogCrawler = crawler.CatalogCrawler{Fetcher: f}
			c.CatalogMaxNew, c.CatalogMaxAgents = 5, 8
		}, func(c *Config) { c.Limiters = lims })
		submit := func(u string) response {
			return h.do(req{method: "POST", path: "/api/v1/agents", body: strings.NewReader(`{"catalogUrl":"` + u + `"}`)})
		}
		admin := registry.Principal{Role: registry.RoleAdmin}
		// Every agent registered is due at once (no scheduler runs here).
		count := func() int64 {
			t.Helper()
			n, err := h.svc.CountDue(h.ctx(), h.svcClock.Now().Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		cat := site.origin + aicatalog.WellKnownPath

		// 12 new entries: 5 registered (the cap per crawl), 7 withheld.
		var a floodAnswer
		r := submit(site.origin)
		r.expectStatus(t, http.StatusAccepted)
		r.json(t, &a)
		n := a.outcomes(t, map[string]int{"5 new agents a catalog may register per crawl": 7})
		if a.Catalog != cat || a.Registered != 5 || a.Withheld != 7 || len(a.Agents) != 5 || n["agent"] != 5 || n["withheld"] != 7 || n["nested"] != 1 || count() != 5 {
			t.Fatalf("first submission: registered %d withheld %d agents %d outcomes %v stored %d\n%s", a.Registered, a.Withheld, len(a.Agents), n, count(), r.body)
		}

		// The same catalog again, three times, in any spelling: 200 with
		// its trace, nothing fetched, registered or spent.
		hits := site.hit(aicatalog.WellKnownPath)
		for _, u := range []string{site.origin, cat, site.origin + "/"} {
			var again floodAnswer
			r := submit(u)
			r.expectStatus(t, http.StatusOK)
			r.json(t, &again)
			if !again.Known || again.Catalog != cat || again.Registered != 0 || len(again.Agents) != 0 || len(again.Entries) != 13 {
				t.Fatalf("resubmission of %s: %s", u, r.body)
			}
		}
		if site.hit(aicatalog.WellKnownPath) != hits || count() != 5 {
			t.Fatalf("resubmissions fetched the catalog %d times, stored %d agents", site.hit(aicatalog.WellKnownPath)-hits, count())
		}

		// The scheduled crawl, on the domain's budget: 3 more, then the
		// cap in all (8) withholds the other 4.
		dom := lims.Agents("", cat)
		rec := crawler.CatalogCrawler{Fetcher: f}.Crawl(h.ctx(), cat, "")
		rec.NextCrawlAt = h.svcClock.Now().Add(time.Hour)
		rec.Spend = func(n int) (int, string) {
			got, refused := dom.Spend(n, h.clock.Now())
			if refused != nil {
				return got, refused.Detail
			}
			return got, ""
		}
		done, err := h.svc.RecordCatalog(h.ctx(), rec)
		if err != nil || len(done.Registered) != 3 || done.Withheld != 4 || count() != 8 {
			t.Fatalf("scheduled crawl: %+v %v, stored %d", done, err, count())
		}
		list, err := h.svc.Catalogs(h.ctx(), admin)
		if err != nil || len(list) != 1 || strings.Count(string(list[0].Trace), "the 8 agents a catalog may register in all") != 4 {
			t.Fatalf("stored trace: %+v %v", list, err)
		}

		// Another catalog of 4: the address has 2 units left (7 - 5), so
		// 2 are registered and 2 withheld for the budget.
		site.serve("/other.json", "o", 4)
		a = floodAnswer{}
		r = submit(site.origin + "/other.json")
		r.expectStatus(t, http.StatusAccepted)
		r.json(t, &a)
		n = a.outcomes(t, map[string]int{"too many submissions from this address": 2})
		if a.Registered != 2 || a.Withheld != 2 || n["agent"] != 2 || count() != 10 {
			t.Fatalf("second catalog: registered %d withheld %d outcomes %v stored %d", a.Registered, a.Withheld, n, count())
		}

		// The budget is spent: a third catalog is 429 and never fetched.
		site.serve("/third.json", "t", 4)
		p := submit(site.origin+"/third.json").expectProblem(t, http.StatusTooManyRequests, "rate-limited")
		if p.Detail != "too many submissions from this address" || site.hit("/third.json") != 0 || count() != 10 {
			t.Fatalf("third catalog: %+v, fetched %d, stored %d", p, site.hit("/third.json"), count())
		}
		// An admin token spends nothing and is never refused.
		r = h.do(req{method: "POST", path: "/api/v1/agents", token: h.token(registry.RoleAdmin),
			body: strings.NewReader(`{"catalogUrl":"` + site.origin + `/third.json"}`)})
		r.expectStatus(t, http.StatusAccepted)
		if r.json(t, &a); a.Registered != 4 || count() != 14 {
			t.Fatalf("admin's catalog: %s", r.body)
		}
	})
}
