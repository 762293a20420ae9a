package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// Cards from api/testdata (copied with their original names).
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
	h.fetchRenderings(agentID, raw, nil)
}

// fetchRenderings is fetch for an agent that also served legacy, its v0.3
// rendering of the card (the crawler's Outcome.Legacy).
func (h *harness) fetchRenderings(agentID string, raw, legacy []byte) {
	h.t.Helper()
	h.fetchVerdict(agentID, raw, legacy, registry.TrustUnsigned)
}

// fetchVerdict records a fetch of raw with the verifier's verdict trust
// and the thumbprints of the keys that verified it.
func (h *harness) fetchVerdict(agentID string, raw, legacy []byte, trust registry.Trust, thumbs ...string) {
	h.t.Helper()
	ctx := h.ctx()
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
		Attempt:     registry.FetchAttempt{At: time.Now(), URL: d.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
		FetchedURL:  d.CardURL,
		Raw:         raw,
		LegacyRaw:   legacy,
		Card:        parsed.Card,
		Problems:    parsed.Problems,
		Trust:       trust,
		Thumbprints: thumbs,
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

// token creates an API token of role on the harness's store.
func (h *harness) token(role registry.Role, hosts ...string) string {
	h.t.Helper()
	secret, _, err := h.svc.CreateToken(h.ctx(), registry.TokenRequest{Role: role, Hosts: hosts})
	if err != nil {
		h.t.Fatal(err)
	}
	return secret
}

// submit registers cardURL through the API and returns the record.
func (h *harness) submit(cardURL, token string) registry.Agent {
	h.t.Helper()
	body, _ := json.Marshal(map[string]string{"cardUrl": cardURL})
	r := h.do(req{method: "POST", path: "/api/v1/agents", body: bytes.NewReader(body), token: token})
	r.expectStatus(h.t, http.StatusAccepted)
	var a registry.Agent
	r.json(h.t, &a)
	return a
}

// listAll lists up to 100 agents as the token's caller.
func listAll(t *testing.T, h *harness, token string) agentPage {
	t.Helper()
	r := h.do(req{method: "GET", path: "/api/v1/agents?pageSize=100", token: token})
	r.expectStatus(t, http.StatusOK)
	var p agentPage
	r.json(t, &p)
	return p
}

// assertNothingStored checks that no agent and no change-log entry exists
// (docs/threats.md A.7 "nothing stored").
func assertNothingStored(t *testing.T, h *harness) {
	t.Helper()
	admin := h.token(registry.RoleAdmin)
	if p := listAll(t, h, admin); p.TotalSize != 0 || len(p.Agents) != 0 {
		t.Fatalf("%d agents stored", p.TotalSize)
	}
	r := h.do(req{method: "GET", path: "/api/v1/changes", token: admin})
	r.expectStatus(t, http.StatusOK)
	if !strings.HasPrefix(string(r.body), `{"changes":[],`) {
		t.Fatalf("change log not empty: %s", r.body)
	}
}
