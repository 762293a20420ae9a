package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// benchServer serves the API over SQLite with n submitted agents and
// returns its URL, an admin token and one agent id.
func benchServer(b *testing.B, n int) (base, admin, id string) {
	b.Helper()
	store := registrytest.SQLite(b)
	svc := registry.NewService(store, registry.ServiceConfig{})
	h, err := New(Config{Service: svc, Ready: store})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	ctx := context.Background()
	for i := range n {
		a, err := svc.Submit(ctx, registry.Anonymous, fmt.Sprintf("https://bench-%05d.example.com/", i), registry.VisibilityPublic)
		if err != nil {
			b.Fatal(err)
		}
		id = a.ID
	}
	admin, _, err = svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleAdmin})
	if err != nil {
		b.Fatal(err)
	}
	return srv.URL, admin, id
}

func benchGet(b *testing.B, client *http.Client, url, token string) {
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.Fatalf("status %d", res.StatusCode)
	}
}

// BenchmarkGetAgent is one anonymous GET /api/v1/agents/{id} over loopback
// HTTP (routing, middleware, SQLite read, JSON).
func BenchmarkGetAgent(b *testing.B) {
	base, _, id := benchServer(b, 200)
	client := &http.Client{}
	for b.Loop() {
		benchGet(b, client, base+"/api/v1/agents/"+id, "")
	}
}

// BenchmarkListAgents is one admin page of 20 agents out of 1,000, with a
// token check per request.
func BenchmarkListAgents(b *testing.B) {
	base, admin, _ := benchServer(b, 1000)
	client := &http.Client{}
	for b.Loop() {
		benchGet(b, client, base+"/api/v1/agents?pageSize=20", admin)
	}
}
