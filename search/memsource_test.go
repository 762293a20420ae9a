package search

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
)

// memSource is an in-memory change log and agent table built from registry
// domain values: the Source the index tests run against.
type memSource struct {
	mu     sync.Mutex
	agents map[string]registry.Agent
	log    []registry.Change
}

func newMemSource() *memSource { return &memSource{agents: map[string]registry.Agent{}} }

// put stores the agent's new state and appends a change, like a registry
// write transaction.
func (m *memSource) put(a registry.Agent, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.agents[a.ID] = a
	m.appendLocked(a.ID, kind)
}

// event appends a change without changing state: a late or duplicate event.
func (m *memSource) event(id, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appendLocked(id, kind)
}

// purge deletes the agent row entirely.
func (m *memSource) purge(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.agents, id)
	m.appendLocked(id, registry.ChangeRemoved)
}

func (m *memSource) appendLocked(id, kind string) {
	m.log = append(m.log, registry.Change{Seq: int64(len(m.log) + 1), AgentID: id, Kind: kind, At: time.Unix(1700000000, 0)})
}

func (m *memSource) Changes(_ context.Context, after int64, limit int) ([]registry.Change, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []registry.Change
	next := after
	for _, c := range m.log {
		if c.Seq > after && len(out) < limit {
			out = append(out, c)
			next = c.Seq
		}
	}
	return out, next, nil
}

func (m *memSource) LatestSeq(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.log)), nil
}

func (m *memSource) Agents(_ context.Context, ids []string) ([]registry.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []registry.Agent
	for _, id := range ids {
		if a, ok := m.agents[id]; ok {
			out = append(out, a)
		}
	}
	return out, nil
}

func (m *memSource) ListAgents(_ context.Context, afterID string, limit int) ([]registry.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.agents))
	for id := range m.agents {
		if id > afterID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]registry.Agent, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.agents[id])
	}
	return out, nil
}

// visibleIDs is what the viewer should find: the source's own answer.
func (m *memSource) visibleIDs(v registry.Scope) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for id, a := range m.agents {
		if visibleTo(a, v) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// visibleTo is the registry's listing rule; the index holds no removed
// agent at all.
func visibleTo(a registry.Agent, v registry.Scope) bool {
	return a.Status != registry.StatusRemoved && v.Admits(registry.ListTerms(a))
}

// The scopes of the three kinds of caller.
var (
	scopeAnonymous = registry.ScopeOf(registry.Anonymous)
	scopeReader    = registry.ScopeOf(registry.Principal{Role: registry.RoleReader})
	scopeAdmin     = registry.ScopeOf(registry.Principal{Role: registry.RoleAdmin})
)

// testAgent is an approved, public, healthy agent with a card.
func testAgent(id, name, desc string, skills ...agentcard.Skill) registry.Agent {
	return registry.Agent{
		ID:         id,
		Host:       id + ".example.com",
		CardURL:    "https://" + id + ".example.com/.well-known/agent-card.json",
		Status:     registry.StatusApproved,
		Visibility: registry.VisibilityPublic,
		Health:     registry.HealthOK,
		Trust:      registry.TrustUnsigned,
		UpdatedAt:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Card: &agentcard.Card{
			Name:               name,
			Description:        desc,
			Shape:              "v1",
			ProtocolVersions:   []string{"1.0"},
			Interfaces:         []agentcard.Interface{{URL: "https://" + id + ".example.com/a2a", Binding: "JSONRPC", ProtocolVersion: "1.0"}},
			DefaultInputModes:  []string{"text/plain"},
			DefaultOutputModes: []string{"text/plain"},
			Skills:             skills,
		},
	}
}

func skill(id, name, desc string, tags ...string) agentcard.Skill {
	return agentcard.Skill{ID: id, Name: name, Description: desc, Tags: tags}
}

// openTest opens an index in a temp dir, rebuilt from src and closed at
// the end of the test.
func openTest(t *testing.T, src *memSource) *Index {
	t.Helper()
	x, err := Open(t.TempDir(), Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if err := x.Rebuild(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	return x
}

func hitIDs(r *Result) []string {
	out := make([]string, 0, len(r.Hits))
	for _, h := range r.Hits {
		out = append(out, h.ID)
	}
	return out
}

func mustSearch(t *testing.T, x *Index, q Query) *Result {
	t.Helper()
	r, err := x.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return r
}
