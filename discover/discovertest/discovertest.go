// Package discovertest builds the registry the discovery surfaces' tests
// run against: a real store (SQLite or PostgreSQL), a real index kept in
// step with it, and agents of every audience (public, internal, pending).
package discovertest

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Fixture is a registry with four agents:
//   - FX (fx.example.com, public, approved; skill "convert", tag finance),
//   - Trips (travel.example.com, public, approved; skill "book-trip", tag travel),
//   - Ledger (ledger.example.com, internal, approved; skill "reconcile", tag finance),
//   - Pending Payments (pay.example.com, public, pending; tag finance).
type Fixture struct {
	Svc    *registry.Service
	Index  *search.Index
	Finder discover.Finder
	// Admin and Reader are bearer tokens of those roles.
	Admin, Reader              string
	FX, Trips, Ledger, Pending registry.Agent
}

// Card describes one skill card.
type Card struct {
	Name, Description, SkillID, SkillName, Tag string
}

// JSON renders c as an A2A v1.0 card of host.
func (c Card) JSON(host string) []byte {
	b, err := json.Marshal(map[string]any{
		"name": c.Name, "description": c.Description, "version": "1.0.0",
		"supportedInterfaces": []map[string]any{{"url": "https://" + host + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"provider":            map[string]any{"organization": c.Name + " Inc", "url": "https://" + host + "/"},
		"capabilities":        map[string]any{"streaming": false},
		"defaultInputModes":   []string{"text/plain"},
		"defaultOutputModes":  []string{"application/json"},
		"skills": []map[string]any{{"id": c.SkillID, "name": c.SkillName, "description": c.Description,
			"tags": []string{c.Tag}}},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// New seeds the fixture on store.
func New(t testing.TB, store *registry.Store) *Fixture {
	t.Helper()
	ctx := context.Background()
	svc := registry.NewService(store, registry.ServiceConfig{})
	f := &Fixture{Svc: svc}
	var err error
	if f.Admin, _, err = svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if f.Reader, _, err = svc.CreateToken(ctx, registry.TokenRequest{Role: registry.RoleReader}); err != nil {
		t.Fatal(err)
	}
	f.FX = f.Add(t, "fx.example.com", Card{"FX Converter", "Converts between currencies at live exchange rates", "convert", "Convert currency", "finance"},
		registry.VisibilityPublic, true)
	f.Trips = f.Add(t, "travel.example.com", Card{"Trip Planner", "Plans and books trips", "book-trip", "Book a trip", "travel"},
		registry.VisibilityPublic, true)
	f.Ledger = f.Add(t, "ledger.example.com", Card{"Internal Ledger", "Reconciles currency ledgers for the finance team", "reconcile", "Reconcile ledgers", "finance"},
		registry.VisibilityInternal, true)
	f.Pending = f.Add(t, "pay.example.com", Card{"Pending Payments", "Sends currency payments", "pay", "Pay", "finance"},
		registry.VisibilityPublic, false)
	idx, err := search.Open(filepath.Join(t.TempDir(), "index"), search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	if err := idx.Rebuild(ctx, svc.IndexSource()); err != nil {
		t.Fatal(err)
	}
	f.Index = idx
	f.Finder = discover.Finder{Index: idx, Registry: svc}
	return f
}

// Add submits https://host/ with the visibility, records c as its first
// version and approves it when approve. Call Sync afterwards.
func (f *Fixture) Add(t testing.TB, host string, c Card, vis registry.Visibility, approve bool) registry.Agent {
	t.Helper()
	return f.AddRaw(t, host, c.JSON(host), vis, approve)
}

// AddRaw is Add with the card's bytes as the agent serves them.
func (f *Fixture) AddRaw(t testing.TB, host string, raw []byte, vis registry.Visibility, approve bool) registry.Agent {
	t.Helper()
	ctx := context.Background()
	admin := registry.Principal{Role: registry.RoleAdmin, Name: "test"}
	a, err := f.Svc.Submit(ctx, admin, "https://"+host+"/", vis)
	if err != nil {
		t.Fatal(err)
	}
	const owner = "discovertest"
	due, err := f.Svc.ClaimDue(ctx, owner, time.Now().Add(time.Minute), time.Minute, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var d *registry.DueAgent
	for i := range due {
		if due[i].ID == a.ID {
			d = &due[i]
		}
	}
	if d == nil {
		t.Fatalf("agent %s is not due", a.ID)
	}
	parsed, err := agentcard.Parse(raw, agentcard.Options{CardURL: d.CardURL})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.RecordFetch(ctx, owner, a.ID, registry.FetchResult{
		Attempt:    registry.FetchAttempt{At: time.Now(), URL: d.CardURL, HTTPStatus: http.StatusOK, Bytes: int64(len(raw))},
		FetchedURL: d.CardURL, Raw: raw, Card: parsed.Card, Problems: parsed.Problems, Trust: registry.TrustUnsigned,
		NextFetchAt: time.Now().Add(time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.ReleaseLeases(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if approve {
		seq := int64(1)
		if _, err := f.Svc.Act(ctx, admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: &seq}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.Svc.Get(ctx, admin, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return *got
}

// Sync rebuilds the index from the registry (after Add).
func (f *Fixture) Sync(t testing.TB) {
	t.Helper()
	if err := f.Index.Rebuild(context.Background(), f.Svc.IndexSource()); err != nil {
		t.Fatal(err)
	}
}
