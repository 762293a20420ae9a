package api

import (
	"os"
	"path/filepath"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/agentcard"
)

// Cards from ../shared/testdata (copied with their names, see its README).
const (
	cardV1       = "A2A_v1.0.0_docs_specification.md_8.5-sample-agent-card.json"
	cardCurrency = "a2a-samples_samples_python_agents_adk_currency_agent_src_currency_agent_agent_card.json"
)

func (h *harness) cardBytes(name string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// fetch plays the crawler for one agent: claim it, parse raw with the real
// card parser and record the result, as the crawler would.
func (h *harness) fetch(agentID string, raw []byte) {
	h.t.Helper()
	ctx := h.t.Context()
	const owner = "api-test"
	due, err := h.svc.ClaimDue(ctx, owner, time.Now().Add(time.Minute), time.Minute, 1000, 1000)
	if err != nil {
		h.t.Fatal(err)
	}
	var d *registry.DueAgent
	for i := range due {
		if due[i].ID == agentID {
			d = &due[i]
		}
	}
	if d == nil {
		h.t.Fatalf("agent %s is not due", agentID)
	}
	parsed, err := agentcard.Parse(raw, agentcard.Options{CardURL: d.CardURL})
	if err != nil {
		h.t.Fatalf("parse: %v", err)
	}
	err = h.svc.RecordFetch(ctx, owner, agentID, registry.FetchResult{
		Attempt:    registry.FetchAttempt{At: time.Now(), URL: d.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
		FetchedURL: d.CardURL,
		Raw:        raw,
		Card:       parsed.Card,
		Problems:   parsed.Problems,
		Trust:      registry.TrustUnsigned,
		// Due again at once, so a test can record the next version.
		NextFetchAt: time.Now(),
	})
	if err != nil {
		h.t.Fatalf("record fetch: %v", err)
	}
	if err := h.svc.ReleaseLeases(ctx, owner); err != nil {
		h.t.Fatal(err)
	}
}
