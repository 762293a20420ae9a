package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/registry"
)

// catalogOrigin serves an AI Catalog the test rewrites and cards by path,
// counting card requests.
type catalogOrigin struct {
	*site
	origin  string
	mu      sync.Mutex
	catalog string
	cards   map[string][]byte
	hits    map[string]int
}

func newCatalogOrigin(t *testing.T, s *site) *catalogOrigin {
	o := &catalogOrigin{site: s, origin: "http://" + s.host, cards: map[string][]byte{}, hits: map[string]int{}}
	s.set(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		body, card := o.catalog, o.cards[r.URL.Path]
		o.mu.Unlock()
		switch {
		case r.URL.Path == aicatalog.WellKnownPath && body != "":
			w.Header().Set("Content-Type", aicatalog.MediaType)
			w.Write([]byte(body))
		case card != nil:
			w.Header().Set("Content-Type", "application/json")
			w.Write(card)
		default:
			http.NotFound(w, r)
		}
	})
	return o
}

func (o *catalogOrigin) serve(entries ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.catalog = `{"specVersion":"1.0","entries":[` + strings.Join(entries, ",") + `]}`
}

func (o *catalogOrigin) hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

func queryEntry(id, u string, queries ...string) string {
	q, _ := json.Marshal(queries)
	return `{"identifier":"` + id + `","type":"` + aicatalog.TypeA2ACard + `","url":"` + u + `","representativeQueries":` + string(q) + `}`
}

// A catalog cannot squat, describe or withdraw another origin's agent
// (docs/threats.md K.102), shown with two ports on one address as the
// attack was. On today's code the catalog registered the victim's card,
// the victim's own submission was 409, the catalog's phrases were the
// victim's search text, and a dropped entry went failing and gone without
// its card being fetched.
func TestCatalogCannotSquatOrWithdraw(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		e := newClaimEnv(t, store, registry.AutoApproveNever)
		admin := registry.Principal{Role: registry.RoleAdmin}
		victim := newCatalogOrigin(t, newSite(t, "127.0.0.1"))
		victim.cards["/card.json"] = agentfleet.GenerateCard(1, victim.origin, "1.0.0")
		// The catalog's origin is claimed by its owner, who holds a
		// publisher token for it.
		cs := newSite(t, "127.0.0.1")
		owner := e.publisher(cs)
		cat := newCatalogOrigin(t, cs)
		cat.cards["/own.json"] = agentfleet.GenerateCard(2, cat.origin, "1.0.0")
		cat.cards["/kept.json"] = agentfleet.GenerateCard(3, cat.origin, "1.0.0")
		catURL := cat.origin + aicatalog.WellKnownPath
		cat.serve(queryEntry("victim", victim.origin+"/card.json", "steal me"),
			queryEntry("own", cat.origin+"/own.json", "own phrase"),
			queryEntry("kept", cat.origin+"/kept.json"))

		// The catalog lists the victim's card first: traced off-origin,
		// not registered; its own two are.
		r := e.do(req{method: "POST", path: "/api/v1/agents", body: strings.NewReader(`{"catalogUrl":"` + cat.origin + `"}`)})
		r.expectStatus(t, http.StatusAccepted)
		var sub floodAnswer
		r.json(t, &sub)
		if sub.Registered != 2 || len(sub.Entries) != 3 || sub.Entries[0].Outcome != "off-origin" || sub.Entries[0].Agent != "" ||
			!strings.Contains(sub.Entries[0].Message, "not on "+cat.origin) {
			t.Fatalf("catalog submission: %s", r.body)
		}
		ids := map[string]string{}
		for _, a := range sub.Agents {
			ids[a.CardURL] = a.ID
		}
		own, kept := ids[cat.origin+"/own.json"], ids[cat.origin+"/kept.json"]
		if own == "" || kept == "" {
			t.Fatalf("registered %v", ids)
		}

		// The victim's own submission registers its agent, with no
		// catalog and no phrases of anyone else.
		v := e.submit(victim.origin+"/card.json", "")
		if v.Catalog != "" || len(v.CatalogQueries) != 0 || v.Status != registry.StatusPending {
			t.Fatalf("the victim's agent: %+v", v)
		}

		// The catalog origin's owner submits a card the catalog registered:
		// not a conflict; the agent, same id, becomes directly submitted.
		// An anonymous submission of the other one is a duplicate: the
		// catalog on its own origin speaks for it.
		o := e.submit(cat.origin+"/own.json", owner.PublisherToken)
		if o.ID != own || o.Catalog != "" || len(o.CatalogQueries) != 0 {
			t.Fatalf("the owner's submission: %+v", o)
		}
		p := e.do(req{method: "POST", path: "/api/v1/agents", body: strings.NewReader(`{"cardUrl":"` + cat.origin + `/kept.json"}`)}).
			expectProblem(t, http.StatusConflict, "duplicate-agent")
		if p.AgentID != kept {
			t.Fatalf("duplicate of %s, want %s", p.AgentID, kept)
		}

		// The catalog changes own's phrases, names the victim again and
		// drops kept: own's phrases stay the owner's (none), and kept is
		// missing from the catalog.
		cat.serve(queryEntry("victim", victim.origin+"/card.json", "steal me"),
			queryEntry("own", cat.origin+"/own.json", "changed phrase"))
		rec := crawler.CatalogCrawler{Fetcher: e.fetcher}.Crawl(e.ctx(), catURL, "")
		rec.NextCrawlAt = e.svcClock.Now().Add(time.Hour)
		done, err := e.svc.RecordCatalog(e.ctx(), rec)
		if err != nil || len(done.Missing) != 1 || done.Missing[0] != kept || len(done.Registered) != 0 {
			t.Fatalf("recrawl: %+v %v", done, err)
		}
		for _, id := range []string{own, v.ID} {
			if a, err := e.svc.Get(e.ctx(), admin, id); err != nil || len(a.CatalogQueries) != 0 || a.Catalog != "" {
				t.Fatalf("%s after the catalog changed: %+v %v", id, a, err)
			}
		}

		// Leaving the catalog fails nothing while the card loads: kept's
		// card is fetched at each crawl, and it stays ok, crawl after
		// crawl, where three not_listed crawls made it gone.
		e.crawl(3) // the victim's, own and kept
		for round := range 3 {
			if round > 0 {
				if _, err := e.svc.RequestCrawl(e.ctx(), admin, kept); err != nil {
					t.Fatal(err)
				}
				e.crawl(1)
			}
			a, err := e.svc.Get(e.ctx(), admin, kept)
			if err != nil || a.Health != registry.HealthOK || a.Status != registry.StatusPending || !a.CatalogMissing || a.LastError != nil {
				t.Fatalf("kept after %d crawls off its catalog: %+v %v", round+1, a, err)
			}
			if n := cat.hit("/kept.json"); n != round+1 {
				t.Fatalf("kept's card fetched %d times after %d crawls", n, round+1)
			}
		}
		if a, err := e.svc.Get(e.ctx(), admin, v.ID); err != nil || a.Health != registry.HealthOK {
			t.Fatalf("the victim's agent: %+v %v", a, err)
		}
	})
}
