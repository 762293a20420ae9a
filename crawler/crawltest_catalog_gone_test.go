package crawler_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// A catalog that answers 404 three crawls in a row is gone by the agents'
// rule and no longer due; the agent it brought stays, with its provenance.
func TestCrawlCatalogGoneAfter404s(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		h := newCatalogHost(t)
		o := h.m.Origin()
		h.cards["/fx.json"] = agentfleet.GenerateCard(1, o, "1.0.0")
		h.serve(urlEntry("fx", o+"/fx.json"))
		st := newStack(t, store, stackOptions{})
		sub, err := st.svc.SubmitCatalog(t.Context(), registry.Anonymous, h.url(), registry.CatalogBudget{})
		if err != nil || sub.Registered != 1 {
			t.Fatalf("%+v %v", sub, err)
		}
		h.m.set(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
		for i, want := range []registry.Health{registry.HealthFailing, registry.HealthFailing, registry.HealthGone} {
			st.recrawl(t, h.url())
			list, err := st.svc.Catalogs(t.Context(), admin)
			if err != nil || len(list) != 1 || list[0].Health != want || list[0].ConsecutiveFailures != i+1 || list[0].LastError == "" {
				t.Fatalf("crawl %d: %+v %v", i+1, list, err)
			}
			if i == 2 && list[0].Agents != 1 {
				t.Fatalf("agents %d", list[0].Agents)
			}
		}
		if due, err := st.svc.DueCatalogs(t.Context(), st.clk.Now().Add(30*24*time.Hour), time.Minute, 10); err != nil || len(due) != 0 {
			t.Fatalf("a gone catalog is due: %+v %v", due, err)
		}
	})
}
