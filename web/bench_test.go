package web_test

import (
	"fmt"
	"io"
	"net/http"
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
