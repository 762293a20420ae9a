package web_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/web"
)

// docs/discovery.md "Federated search": with federation on, a search's
// first page shows the peers' results with their source, escaped, after
// Cardex's own; without text, on a later page or with federation off,
// no peer is asked.
func TestCatalogueFederatedResults(t *testing.T) {
	var asked atomic.Int32
	var lastText atomic.Value
	e := newEnv(t, func(c *web.Config) {
		c.Federate = func(_ context.Context, text string) []discover.ARDResult {
			asked.Add(1)
			lastText.Store(text)
			return []discover.ARDResult{{ARDEntry: discover.ARDEntry{Identifier: "urn:air:peer.example:agent:x",
				DisplayName: "Peer <b>Currency</b>", Type: "application/a2a-agent-card+json", URL: "https://peer.example/card.json",
				Description: "Converts money"}, Score: 70, Source: "https://registry.peer.example/ard"}}
		}
	})
	e.listed("currency.example.com", "currency.json")
	e.sync()
	r := e.get("/?q=currency")
	wantStatus(t, r, http.StatusOK)
	body := r.body
	i, j := strings.Index(body, `id="results"`), strings.Index(body, `id="federated"`)
	if asked.Load() != 1 || lastText.Load() != "currency" || j < 0 || i > j ||
		!strings.Contains(body, `<a href="https://peer.example/card.json" rel="nofollow noopener noreferrer"><bdi>Peer &lt;b&gt;Currency&lt;/b&gt;</bdi></a>`) ||
		!strings.Contains(body, `from <bdi>https://registry.peer.example/ard</bdi>`) {
		t.Fatalf("asked %d: %s", asked.Load(), clip(body))
	}
	for _, path := range []string{"/", "/?q=currency&pageToken=x"} {
		e.get(path)
	}
	if asked.Load() != 1 {
		t.Fatalf("peers asked %d times", asked.Load())
	}
	off := newEnv(t)
	if r := off.get("/?q=currency"); strings.Contains(r.body, `id="federated"`) {
		t.Fatal("federated section without federation")
	}
}
