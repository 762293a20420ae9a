package crawler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// memQueue is a due queue with leases for the pure scheduling tests in fake
// time: registry.Service runs over SQLite (cgo), whose goroutines and locks
// cannot live inside a synctest bubble. It implements the lease and
// per-host rules the way registry's ClaimDue does; the end-to-end tests run
// the real registry on SQLite and PostgreSQL.
type memQueue struct {
	mu        sync.Mutex
	agents    map[string]*memAgent
	ignoreCap bool // hand out agents beyond the per-host cap (a lease that expired under a long crawl)
	claims    int
	released  []string
	recorded  map[string]int
}

type memAgent struct {
	id, host string
	due      time.Time
	owner    string
	until    time.Time
}

func newMemQueue() *memQueue {
	return &memQueue{agents: map[string]*memAgent{}, recorded: map[string]int{}}
}

func (q *memQueue) add(id, host string, due time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.agents[id] = &memAgent{id: id, host: host, due: due}
}

func (q *memQueue) ClaimDue(_ context.Context, owner string, now time.Time, ttl time.Duration, limit, perHost int) ([]registry.DueAgent, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	live := map[string]int{}
	for _, a := range q.agents {
		if a.owner != "" && a.until.After(now) {
			live[a.host]++
		}
	}
	ids := make([]string, 0, len(q.agents))
	for id := range q.agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []registry.DueAgent
	for _, id := range ids {
		a := q.agents[id]
		if len(out) == limit {
			break
		}
		if a.due.After(now) || (a.owner != "" && a.until.After(now)) || (!q.ignoreCap && live[a.host] >= perHost) {
			continue
		}
		a.owner, a.until = owner, now.Add(ttl)
		live[a.host]++
		out = append(out, registry.DueAgent{ID: a.id, CardURL: "https://" + a.host + "/.well-known/agent-card.json", Host: a.host, LeaseUntil: a.until})
	}
	return out, nil
}

func (q *memQueue) RecordFetch(_ context.Context, owner, id string, res registry.FetchResult) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	a := q.agents[id]
	if a == nil || a.owner != owner {
		return registry.ErrLeaseLost
	}
	a.owner, a.due = "", res.NextFetchAt
	q.recorded[id]++
	return nil
}

func (q *memQueue) ReleaseLeases(_ context.Context, owner string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, a := range q.agents {
		if a.owner == owner {
			a.owner = ""
			q.released = append(q.released, a.id)
		}
	}
	return nil
}

func (q *memQueue) recordedCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, c := range q.recorded {
		n += c
	}
	return n
}

// probe is a process function that takes d of fake time per agent and
// tracks concurrency overall and per host.
type probe struct {
	d       time.Duration
	mu      sync.Mutex
	cur     int
	peak    int
	perHost map[string]int
	hostMax map[string]int
	started []string
}

func newProbe(d time.Duration) *probe {
	return &probe{d: d, perHost: map[string]int{}, hostMax: map[string]int{}}
}

func (p *probe) process(ctx context.Context, a registry.DueAgent) (registry.FetchResult, bool) {
	p.mu.Lock()
	p.cur++
	p.peak = max(p.peak, p.cur)
	p.perHost[a.Host]++
	p.hostMax[a.Host] = max(p.hostMax[a.Host], p.perHost[a.Host])
	p.started = append(p.started, a.ID)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.cur--
		p.perHost[a.Host]--
		p.mu.Unlock()
	}()
	select {
	case <-time.After(p.d):
	case <-ctx.Done():
		return registry.FetchResult{}, false
	}
	return registry.FetchResult{NextFetchAt: time.Now().Add(time.Hour)}, true
}

func syncScheduler(t *testing.T, q *memQueue, p *probe, cfg SchedulerConfig) *Scheduler {
	t.Helper()
	f, err := fetch.New(fetch.Config{Policy: fetch.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registry, cfg.Fetcher, cfg.Owner = q, f, "owner-a"
	s, err := NewScheduler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.process = p.process
	return s
}
