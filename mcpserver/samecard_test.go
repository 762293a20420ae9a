package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/a2a"
	"github.com/cardexhq/cardex/api"
	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// The A2A answer by id, MCP get_agent and GET /api/v1/agents/{id} serve
// the same A2A v1.0 card, and their result lists the same summary as GET
// /api/v1/agents; the card, byte for byte once compacted, for a v0.3 card
// with security schemes, requirements and several interfaces (the cases a
// second rendering would drift on).
func TestSurfacesServeTheSameCard(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		s := newServer(t, store)
		raw, err := os.ReadFile("../agentcard/testdata/cards/A2A_v0.3.0_docs_specification.md_5.7-sample-agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		geo := s.f.AddRaw(t, "georoute-agent.example.com", raw, registry.VisibilityPublic, true)
		s.f.Sync(t)

		apiH, err := api.New(api.Config{Service: s.f.Svc})
		if err != nil {
			t.Fatal(err)
		}
		apiSrv := httptest.NewServer(apiH)
		t.Cleanup(apiSrv.Close)
		status, body := request(t, http.MethodGet, apiSrv.URL+"/api/v1/agents/"+geo.ID, "", nil)
		if status != http.StatusOK {
			t.Fatalf("GET agent: %d %s", status, body)
		}
		var rec struct {
			Card json.RawMessage `json:"card"`
		}
		if err := json.Unmarshal(body, &rec); err != nil {
			t.Fatal(err)
		}
		want := compact(t, string(rec.Card))
		if !strings.Contains(want, `"openIdConnectSecurityScheme"`) || !strings.Contains(want, `"securityRequirements"`) ||
			strings.Count(want, `"protocolBinding"`) != 3 {
			t.Fatalf("REST card lacks the v1.0 members this test is about: %s", want)
		}

		status, body = request(t, http.MethodGet, apiSrv.URL+"/api/v1/agents", "", nil)
		var list struct {
			Agents []struct {
				Summary json.RawMessage `json:"summary"`
			} `json:"agents"`
		}
		if err := json.Unmarshal(body, &list); err != nil || status != http.StatusOK || len(list.Agents) == 0 {
			t.Fatalf("GET agents: %d %s", status, body)
		}
		wantSummary := compact(t, string(list.Agents[0].Summary))
		if !strings.Contains(wantSummary, `"skillCount":`) {
			t.Fatalf("REST list summary: %s", wantSummary)
		}

		// MCP get_agent (both eras) and search_agents.
		for _, era := range eras {
			cs := s.session(t, nil, era)
			var d struct {
				Card json.RawMessage `json:"card"`
			}
			call(t, cs, "get_agent", map[string]any{"id": geo.ID}, &d)
			if got := compact(t, string(d.Card)); got != want {
				t.Fatalf("MCP get_agent (%s) card\n%s\nREST card\n%s", era, got, want)
			}
			// A result list carries the summary, the same as the REST list's.
			var page struct {
				Agents []struct {
					ID      string          `json:"id"`
					Card    json.RawMessage `json:"card"`
					Summary json.RawMessage `json:"summary"`
				} `json:"agents"`
			}
			call(t, cs, "search_agents", map[string]any{"q": "GeoSpatial"}, &page)
			if len(page.Agents) != 1 || page.Agents[0].ID != geo.ID || page.Agents[0].Card != nil ||
				compact(t, string(page.Agents[0].Summary)) != wantSummary {
				t.Fatalf("MCP search_agents (%s): %+v", era, page)
			}
		}

		// A2A SendMessage over JSON-RPC: the card in the answer's data part
		// when asked by id, the summary when searching.
		a2aH, err := a2a.New(a2a.Config{Finder: s.f.Finder, Gate: &discover.Gate{Authenticate: s.f.Svc.Authenticate}})
		if err != nil {
			t.Fatal(err)
		}
		a2aSrv := httptest.NewServer(a2aH)
		t.Cleanup(a2aSrv.Close)
		for _, tc := range []struct{ part, member, want string }{
			{`{"data":{"id":"` + geo.ID + `"},"mediaType":"application/json"}`, "card", want},
			{`{"text":"GeoSpatial"}`, "summary", wantSummary},
		} {
			status, body = request(t, http.MethodPost, a2aSrv.URL+a2a.JSONRPCPath,
				`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[`+tc.part+`]}}}`,
				map[string]string{"A2A-Version": "1.0", "Content-Type": "application/json"})
			if status != http.StatusOK {
				t.Fatalf("SendMessage: %d %s", status, body)
			}
			var env struct {
				Result struct {
					Message struct {
						Parts []struct {
							Data *struct {
								Agents []map[string]json.RawMessage `json:"agents"`
							} `json:"data"`
						} `json:"parts"`
					} `json:"message"`
				} `json:"result"`
			}
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			parts := env.Result.Message.Parts
			if len(parts) != 2 || parts[1].Data == nil || len(parts[1].Data.Agents) != 1 || string(parts[1].Data.Agents[0]["id"]) != `"`+geo.ID+`"` {
				t.Fatalf("SendMessage answer %s", body)
			}
			if got := compact(t, string(parts[1].Data.Agents[0][tc.member])); got != tc.want {
				t.Fatalf("A2A %s\n%s\nREST\n%s", tc.member, got, tc.want)
			}
		}
	})
}

func request(t *testing.T, method, url, body string, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
