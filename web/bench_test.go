package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkCataloguePage measures one catalogue page over loopback HTTP:
// search with facets over 200 agents, then hydrating the 20 hits from
// SQLite (one batch read, the G.72 re-check) and rendering.
func BenchmarkCataloguePage(b *testing.B) {
	e := newEnv(b)
	cards := []string{"geospatial.json", "hotel.json", "currency.json", "buywhere.json", "toolroute.json"}
	for i := range 200 {
		e.listed(fmt.Sprintf("agent%d.example.com", i), cards[i%len(cards)])
	}
	e.sync()
	for _, path := range []string{"/", "/?q=hotel+booking", "/?tag=maps&binding=GRPC"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				res, err := http.Get(e.srv.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
		})
	}
}

// BenchmarkAgentPage renders one agent page (record, versions, raw card).
func BenchmarkAgentPage(b *testing.B) {
	e := newEnv(b)
	id := e.listed("geo.example.com", "geospatial.json")
	for b.Loop() {
		res, err := http.Get(e.srv.URL + "/agents/" + id)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// largeCard is a valid card of about 200 KiB: 200 skills with long prose.
func largeCard() []byte {
	skills := make([]map[string]any, 200)
	for i := range skills {
		skills[i] = map[string]any{"id": fmt.Sprintf("s%d", i), "name": fmt.Sprintf("Skill %d", i),
			"description": strings.Repeat("ledger reconciliation of accounts ", 30), "tags": []string{"ledger"}}
	}
	b, _ := json.Marshal(map[string]any{"name": "Big Ledger", "description": "Reconciles ledgers", "version": "1.0.0",
		"supportedInterfaces": []map[string]any{{"url": "https://big.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"capabilities":        map[string]any{}, "defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": skills})
	return b
}

// BenchmarkAgentPageLargeCard is the page of an agent whose card is far
// over maxInlineCard (docs/benchmarks.md "Cost of anonymous requests").
func BenchmarkAgentPageLargeCard(b *testing.B) {
	e := newEnv(b)
	a := e.submit("big.example.com")
	e.record(a.ID, fetched{raw: largeCard()})
	e.approve(a.ID)
	for b.Loop() {
		res, err := http.Get(e.srv.URL + "/agents/" + a.ID)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}
