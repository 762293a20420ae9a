package crawler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cardexhq/cardex/registry"
)

// dispatch claims due agents whenever it is kicked (tick, Kick, or a worker
// freed) and there is room in the pool. Claims are sized to the free
// workers, so every claimed agent starts at once and no lease ticks away in
// a queue.
//
// A finished crawl kicks too, so a burst of due agents is worked through
// without waiting for ticks; but a claim runs only once a quarter of the
// pool is free or the pool is empty: one claim transaction per batch rather
// than per crawl keeps the database's share of the work small.
func (s *Scheduler) dispatch() {
	defer close(s.dispatcherDone)
	workers := int64(s.cfg.Workers)
	batch := max(1, workers/4)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		s.claim(workers, batch)
	}
}

// claim fills the pool until it is full or nothing is claimable. Agents
// held back by the per-host cap become claimable as crawls of their host
// finish, and each finish kicks, so they are not left for the next tick.
func (s *Scheduler) claim(workers, batch int64) {
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		inFlight := s.inFlight.Load()
		free := workers - inFlight
		if free <= 0 || (free < batch && inFlight > 0) {
			return // a finishing worker kicks again
		}
		due, err := s.cfg.Registry.ClaimDue(s.ctx, s.cfg.Owner, s.cfg.Now(), s.cfg.LeaseTTL, int(free), s.cfg.PerHost)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Error("claim due agents", "err", err)
			}
			return
		}
		s.stats.claimed.Add(int64(len(due)))
		for _, a := range due {
			s.inFlight.Add(1)
			s.jobs <- a // never blocks: the buffer holds Workers and inFlight ≤ Workers
		}
		s.stats.claimRuns.Add(1)
		if len(due) == 0 {
			return
		}
	}
}

func (s *Scheduler) work() {
	for a := range s.jobs {
		s.run(a)
		s.inFlight.Add(-1)
		s.Kick()
	}
}

// run crawls one claimed agent and records the result. The in-process host
// cap backs up the database's: if a lease expired under a crawl that ran
// long, the agent's host may have been claimed again meanwhile.
func (s *Scheduler) run(a registry.DueAgent) {
	s.hosts.acquire(a.Host)
	defer s.hosts.release(a.Host)
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.LeaseTTL/2)
	res, ok := s.process(ctx, a)
	cancel()
	if !ok {
		return
	}
	err := s.cfg.Registry.RecordFetch(s.ctx, s.cfg.Owner, a.ID, res)
	switch {
	case err == nil:
		s.stats.recorded.Add(1)
	case errors.Is(err, registry.ErrLeaseLost):
		// RELIABILITY.md F.64: the agent was removed (or its lease taken
		// over) while we crawled; the registry dropped the write.
		s.stats.leaseLost.Add(1)
		s.log.Info("crawl result dropped: lease lost", "agent_id", a.ID)
	case s.ctx.Err() != nil:
		// Shutdown ran out of time; the lease is released or expires.
	default:
		s.stats.recordErrors.Add(1)
		s.log.Error("record crawl result", "agent_id", a.ID, "err", err)
	}
}

// hostSlots caps crawls in flight per host within this process.
type hostSlots struct {
	limit int
	mu    sync.Mutex
	cond  *sync.Cond
	n     map[string]int
}

func newHostSlots(limit int) *hostSlots {
	h := &hostSlots{limit: limit, n: map[string]int{}}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (h *hostSlots) acquire(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.n[host] >= h.limit {
		h.cond.Wait()
	}
	h.n[host]++
}

func (h *hostSlots) release(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n[host]--; h.n[host] <= 0 {
		delete(h.n, host)
	}
	h.cond.Broadcast()
}

// Stats are counters since the scheduler was built.
type Stats struct {
	ClaimRuns    int64 // claim transactions run
	Claimed      int64 // agents claimed
	Recorded     int64 // results written
	LeaseLost    int64 // results dropped because the agent was removed or taken over
	RecordErrors int64 // results the registry refused for another reason
	InFlight     int64 // claimed and not yet finished
}

type stats struct {
	claimRuns, claimed, recorded, leaseLost, recordErrors atomic.Int64
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	return Stats{
		ClaimRuns:    s.stats.claimRuns.Load(),
		Claimed:      s.stats.claimed.Load(),
		Recorded:     s.stats.recorded.Load(),
		LeaseLost:    s.stats.leaseLost.Load(),
		RecordErrors: s.stats.recordErrors.Load(),
		InFlight:     s.inFlight.Load(),
	}
}
