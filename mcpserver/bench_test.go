package mcpserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// benchCard is a card of 200 skills whose prose all carries "ledger", so
// that a search for it matches every skill of every agent: the largest
// page search_agents can answer (docs/benchmarks.md "Cost of anonymous
// requests").
func benchCard(i int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	word := func() string {
		const syl = "kamitorelusanipodevaxiquzeb"
		var b strings.Builder
		for range 2 + r.IntN(3) {
			j := r.IntN(len(syl) - 1)
			b.WriteString(syl[j : j+2])
		}
		return b.String()
	}
	prose := func(n int) string {
		var b strings.Builder
		b.WriteString("ledger")
		for b.Len() < n {
			b.WriteString(" " + word())
		}
		return b.String()[:n]
	}
	skills := make([]map[string]any, 200)
	for j := range skills {
		skills[j] = map[string]any{"id": fmt.Sprintf("skill-%d-%d", i, j), "name": fmt.Sprintf("Skill %d of agent %d", j, i),
			"description": prose(300), "tags": []string{word(), word(), word(), "ledger"}, "examples": []string{prose(100)}}
	}
	host := fmt.Sprintf("cost%d.example.com", i)
	b, err := json.Marshal(map[string]any{
		"name": fmt.Sprintf("Cost agent %d", i), "description": prose(2000), "version": "1.0.0",
		"supportedInterfaces": []map[string]any{{"url": "https://" + host + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"provider":            map[string]any{"organization": "Cost Org", "url": "https://" + host + "/"},
		"capabilities":        map[string]any{"streaming": true},
		"defaultInputModes":   []string{"text/plain"},
		"defaultOutputModes":  []string{"application/json"},
		"skills":              skills,
	})
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkSearchAgentsPage100 is one anonymous search_agents call for a
// page of 100 agents that all match, through the real handler on
// loopback; its CPU profile says where a page of 100 goes.
func BenchmarkSearchAgentsPage100(b *testing.B) {
	s := newServer(b, registrytest.SQLite(b))
	for i := range 100 {
		s.f.AddRaw(b, fmt.Sprintf("cost%d.example.com", i), benchCard(i), registry.VisibilityPublic, true)
	}
	s.f.Sync(b)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_agents","arguments":{"q":"ledger","pageSize":100}}}`
	code, _, out := s.post(body, "Mcp-Protocol-Version", "2025-11-25")
	if code != http.StatusOK || strings.Contains(out, `"isError":true`) || strings.Count(out, `"cardUrl"`) < 100 {
		b.Fatalf("%d %.300s", code, out)
	}
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	for b.Loop() {
		if code, _, _ := s.post(body, "Mcp-Protocol-Version", "2025-11-25"); code != http.StatusOK {
			b.Fatal(code)
		}
	}
}

// TestLargePageTextIsADigest: a page whose JSON is over maxTextCopy
// carries a digest as its text block — every agent's id, name and links in
// the page's order, the total and the page token — and the whole page in
// structured content; a page within it carries the whole JSON as text.
func TestLargePageTextIsADigest(t *testing.T) {
	s := newServer(t, registrytest.SQLite(t))
	const n = 60
	for i := range n {
		s.f.AddRaw(t, fmt.Sprintf("cost%d.example.com", i), benchCard(i), registry.VisibilityPublic, true)
	}
	s.f.Sync(t)
	cs := s.session(t, nil, eras[1])
	for _, tc := range []struct {
		size   int
		digest bool
	}{{20, false}, {n, true}} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_agents", Arguments: map[string]any{"q": "ledger", "pageSize": tc.size}})
		if err != nil || res.IsError {
			t.Fatalf("pageSize %d: %v %v", tc.size, err, res)
		}
		full, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var page discover.Page
		if err := json.Unmarshal(full, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Agents) != tc.size || page.TotalSize != n {
			t.Fatalf("pageSize %d: %d agents of %d", tc.size, len(page.Agents), page.TotalSize)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !tc.digest {
			if len(full) > maxTextCopy || compact(t, text) != compact(t, string(full)) {
				t.Fatalf("pageSize %d (%d bytes): text is not the JSON copy", tc.size, len(full))
			}
			continue
		}
		if len(full) <= maxTextCopy {
			t.Fatalf("pageSize %d: %d bytes, not over %d", tc.size, len(full), maxTextCopy)
		}
		var d pageDigest
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			t.Fatal(err)
		}
		if !d.Digest || d.TotalSize != n || d.NextPageToken != page.NextPageToken || len(d.Agents) != n {
			t.Fatalf("digest: %+v", d)
		}
		for i, a := range d.Agents {
			p := page.Agents[i]
			if a.ID != p.ID || a.Name != p.Name || a.CardURL != p.CardURL || a.Record != p.Record || a.Page != p.Page || a.Trust != p.Trust || a.Health != p.Health {
				t.Fatalf("digest agent %d: %+v vs %+v", i, a, p)
			}
		}
		if len(text) > len(full)/3 {
			t.Fatalf("digest %d bytes for a page of %d", len(text), len(full))
		}
	}
}

// BenchmarkListSkillsPage100 is one anonymous list_skills call for a page
// of 100 skills that all match, as BenchmarkSearchAgentsPage100.
func BenchmarkListSkillsPage100(b *testing.B) {
	s := newServer(b, registrytest.SQLite(b))
	for i := range 100 {
		s.f.AddRaw(b, fmt.Sprintf("cost%d.example.com", i), benchCard(i), registry.VisibilityPublic, true)
	}
	s.f.Sync(b)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_skills","arguments":{"q":"ledger","pageSize":100}}}`
	code, _, out := s.post(body, "Mcp-Protocol-Version", "2025-11-25")
	if code != http.StatusOK || strings.Contains(out, `"isError":true`) || strings.Count(out, `"skillId"`) < 100 {
		b.Fatalf("%d %.300s", code, out)
	}
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	for b.Loop() {
		if code, _, _ := s.post(body, "Mcp-Protocol-Version", "2025-11-25"); code != http.StatusOK {
			b.Fatal(code)
		}
	}
}
