package demo

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/aicatalog"
)

// The demo's multi-agent host: one origin that lists its agents in an AI
// Catalog. The demo submits the bare host; Cardex crawls its card and its
// catalog, and the listed agents arrive as pending agents in the review
// queue, each naming the catalog (docs/discovery.md). One more gives its
// card inline (data, no URL of its own): it is registered under the
// catalog's host and its card read from the catalog. One entry points at
// another host (another registrable domain): the crawl refuses it and its
// trace says so.
const (
	demoCatalogPort   = 47083
	demoCatalogAgents = 3 // by card URL, plus one inline
	// CatalogListed is how many agents the catalog registers: those
	// listed by card URL and the inline one.
	CatalogListed = demoCatalogAgents + 1
)

type catalogHost struct {
	origin string
	srv    *http.Server
	docs   map[string][]byte // path → body
	a2a    http.Handler      // its agents' A2A endpoints, on its own origin
}

func startCatalogHost(h, other *agentfleet.Host, port int, a2a http.Handler,
	answerOn func(origin string, card []byte, slug, name string) ([]byte, error), log *slog.Logger) (*catalogHost, error) {
	ln, err := listenDemo(h, port)
	if err != nil {
		return nil, err
	}
	c := &catalogHost{origin: "http://" + ln.Addr().String(), docs: map[string][]byte{}, a2a: a2a}
	// Its cards are numbered apart from the other demo agents' so that
	// no two demo agents share a name. Their A2A endpoints are on this
	// host: an inline card's must be (docs/discovery.md).
	card := func(n int) []byte {
		if err == nil {
			var b []byte
			if b, err = answerOn(c.origin, agentfleet.GenerateCard(n, c.origin, "1.0.0"), fmt.Sprintf("catalog/%d", n), ""); err == nil {
				return b
			}
		}
		return nil
	}
	c.docs["/.well-known/agent-card.json"] = card(410)
	entries := make([]aicatalog.Entry, 0, demoCatalogAgents+2)
	for i := range demoCatalogAgents {
		p := fmt.Sprintf("/agents/%d/agent-card.json", i+1)
		c.docs[p] = card(411 + i)
		entries = append(entries, aicatalog.Entry{Identifier: fmt.Sprintf("urn:air:catalog-demo:agent:%d", i+1),
			Type: aicatalog.TypeA2ACard, URL: c.origin + p})
	}
	entries = append(entries, aicatalog.Entry{Identifier: "urn:air:catalog-demo:agent:inline",
		Type: aicatalog.TypeA2ACard, Data: card(411 + demoCatalogAgents)})
	entries = append(entries, aicatalog.Entry{Identifier: "urn:air:catalog-demo:agent:elsewhere",
		Type: aicatalog.TypeA2ACard, URL: other.Origin() + "/elsewhere/agent-card.json"})
	if err != nil {
		ln.Close()
		return nil, err
	}
	doc, err := aicatalog.Marshal(&aicatalog.Document{Host: &aicatalog.Host{DisplayName: "Catalog demo host"}, Entries: entries})
	if err != nil {
		ln.Close()
		return nil, err
	}
	c.docs[aicatalog.WellKnownPath] = doc
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("demo fleet: catalog host stopped", "err", err)
		}
	}()
	return c, nil
}

func (c *catalogHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := c.docs[r.URL.Path]
	if !ok {
		c.a2a.ServeHTTP(w, r) // a 404 for paths that are no endpoint
		return
	}
	ct := "application/json"
	if r.URL.Path == aicatalog.WellKnownPath {
		ct = aicatalog.MediaType
	}
	w.Header().Set("Content-Type", ct)
	w.Write(body)
}

// url is the bare host the demo submits.
func (c *catalogHost) url() string { return c.origin + "/" }

func (c *catalogHost) close() {
	if c != nil {
		c.srv.Close()
	}
}
