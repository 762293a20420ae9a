package crawler_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// without returns card with the given top-level members removed or replaced
// (a nil value removes).
func without(t *testing.T, card []byte, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(card, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A card must name its agent and list an A2A endpoint (docs/lint.md). A
// listed agent whose card loses either is an invalid_card fetch: the agent
// keeps its last good version and shows the error; a new submission of
// such a document never becomes a listed card.
func TestCrawlCardWithoutNameOrEndpointKeepsLastGood(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		m := newMutableAgent(t)
		good := agentfleet.GenerateCard(11, m.Origin(), "1.0.0")
		m.card(good)
		fresh := newMutableAgent(t)
		fresh.card(without(t, agentfleet.GenerateCard(12, fresh.Origin(), "1.0.0"), map[string]any{"supportedInterfaces": nil, "url": nil}))
		st := newStack(t, store, stackOptions{})
		id, freshID := st.submit(t, m.URL()), st.submit(t, fresh.URL())
		st.crawl(t, 2)
		if a := st.get(t, id); a.VersionSeq != 1 || a.Card == nil || a.Card.Name == "" {
			t.Fatalf("good card not recorded: version %d", a.VersionSeq)
		}
		if a := st.get(t, freshID); a.Card != nil || a.VersionSeq != 0 || a.LastError == nil || a.LastError.Class != fetch.ClassInvalidCard {
			t.Errorf("a card without endpoint was listed: card %v version %d error %+v", a.Card != nil, a.VersionSeq, a.LastError)
		}
		mcp := []map[string]any{{"url": m.Origin() + "/mcp", "protocolBinding": "JSONRPC", "protocolVersion": "2025-06-18"}}
		for _, c := range []struct {
			what, msg string
			card      []byte
		}{
			{"no endpoint", "no A2A endpoint", without(t, good, map[string]any{"supportedInterfaces": nil, "url": nil})},
			{"empty interfaces", "no A2A endpoint", without(t, good, map[string]any{"supportedInterfaces": []any{}, "url": nil})},
			{"only an MCP server", "no A2A endpoint", without(t, good, map[string]any{"supportedInterfaces": mcp, "url": nil})},
			{"no name", "has no name", without(t, good, map[string]any{"name": nil})},
			{"blank name", "has no name", without(t, good, map[string]any{"name": "   "})},
		} {
			m.card(c.card)
			st.later(t, 25*time.Hour, 2)
			f := st.lastFetch(t, id)
			if f.Result != registry.ResultError || f.ErrorClass != fetch.ClassInvalidCard || f.HTTPStatus != 200 || !strings.Contains(f.Message, c.msg) {
				t.Errorf("%s: fetch %+v", c.what, f)
			}
			a := st.get(t, id)
			if a.VersionSeq != 1 || a.Card == nil || a.Health != registry.HealthFailing || a.LastError == nil ||
				a.LastError.Class != fetch.ClassInvalidCard || !strings.Contains(a.LastError.Message, c.msg) {
				t.Errorf("%s: version %d card %v health %s error %+v: the last good card must stay, with the error", c.what, a.VersionSeq, a.Card != nil, a.Health, a.LastError)
			}
			raw, _, err := st.svc.Card(t.Context(), admin, id)
			if err != nil || string(raw) != string(good) {
				t.Errorf("%s: current card bytes changed (%v)", c.what, err)
			}
		}
		m.card(good)
		st.later(t, 25*time.Hour, 2)
		if a := st.get(t, id); a.Health != registry.HealthOK || a.LastError != nil || a.VersionSeq != 1 {
			t.Errorf("recovered: health %s error %+v version %d", a.Health, a.LastError, a.VersionSeq)
		}
	})
}
