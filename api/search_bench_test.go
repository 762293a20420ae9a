package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
)

// searchBenchServer serves the API with a search index over SQLite holding n
// approved agents with parsed cards (tags from a small vocabulary).
func searchBenchServer(b *testing.B, n int) string {
	b.Helper()
	store := registrytest.SQLite(b)
	svc := registry.NewService(store, registry.ServiceConfig{})
	ctx := context.Background()
	admin := registry.Principal{Role: registry.RoleAdmin, Name: "bench"}
	for i := range n {
		if _, err := svc.Submit(ctx, registry.Anonymous, fmt.Sprintf("https://bench-%05d.example.com/", i), registry.VisibilityPublic); err != nil {
			b.Fatal(err)
		}
	}
	due, err := svc.ClaimDue(ctx, "bench", time.Now().Add(time.Minute), time.Hour, n, n)
	if err != nil || len(due) != n {
		b.Fatalf("claimed %d: %v", len(due), err)
	}
	one := int64(1)
	for i, d := range due {
		tag := convergenceTags[i%len(convergenceTags)]
		raw := testCard{name: "Agent " + tag + " " + d.Host, description: "Helps with " + tag + " questions.", provider: "Org",
			streaming: i%2 == 0, skills: []skill{{id: "s", name: "Skill " + tag, description: "Answers about " + tag + ".", tags: []string{tag}}}}.json(d.Host)
		parsed, err := agentcard.Parse(raw, agentcard.Options{CardURL: d.CardURL})
		if err != nil {
			b.Fatal(err)
		}
		if err := svc.RecordFetch(ctx, "bench", d.ID, registry.FetchResult{
			Attempt:    registry.FetchAttempt{At: time.Now(), URL: d.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
			FetchedURL: d.CardURL, Raw: raw, Card: parsed.Card, Trust: registry.TrustUnsigned,
		}); err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Act(ctx, admin, d.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: &one}); err != nil {
			b.Fatal(err)
		}
	}
	idx, err := search.Open(filepath.Join(b.TempDir(), "index"), search.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { idx.Close() })
	if err := idx.Rebuild(ctx, svc.IndexSource()); err != nil {
		b.Fatal(err)
	}
	h, err := New(Config{Service: svc, Ready: store, Search: idx})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkSearchAgents is one anonymous search page of 20 out of 1,000
// agents over loopback HTTP: index query with facets and highlights, one
// SQL read to hydrate and re-check the page (G.72), JSON.
func BenchmarkSearchAgents(b *testing.B) {
	base := searchBenchServer(b, 1000)
	client := &http.Client{}
	for _, q := range []string{"", "q=weather", "q=weather+questions&capability=streaming", "tag=maps&tag=finance&sort=name"} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				benchGet(b, client, base+"/api/v1/agents?pageSize=20&"+q, "")
			}
		})
	}
}
