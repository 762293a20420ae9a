package crawler

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// dispatch claims due agents whenever it is kicked (tick, Kick, or a
// finished crawl) and there is room. Room is four times the pool: claimed
// agents queue for the workers, so the pool stays busy while the next claim
// runs, and a claim runs only once half of the room is free (or nothing is
// outstanding), so the database sees one claim transaction per batch of
// about two pools' worth of agents rather than one per crawl. A claim scans
// the due agents (registry.ClaimDue) and is the most expensive statement of
// the crawl: in the 10,000-agent benchmark on SQLite, going from a room of
// one pool to four cut claims from ~1,250 to ~190 per round and raised
// throughput by about half (docs/benchmarks.md).
//
// A queued agent's lease keeps ticking. With the policy's 10 s fetch limit a
// full queue drains in about 40 s, well inside the 2 min lease; run skips an
// agent whose lease has too little time left rather than race its expiry.
func (s *Scheduler) dispatch() {
	defer close(s.dispatcherDone)
	room := int64(cap(s.jobs))
	batch := max(1, room/2)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		s.claim(room, batch)
	}
}

// claim fills the room until it is full or nothing is claimable. Agents
// held back by the per-host cap become claimable as crawls of their host
// finish, and each finish kicks, so they are not left for the next tick.
func (s *Scheduler) claim(room, batch int64) {
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		outstanding := s.inFlight.Load()
		free := room - outstanding
		if free <= 0 || (free < batch && outstanding > 0) {
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
			s.jobs <- a // never blocks: the buffer holds the room and inFlight ≤ room
		}
		s.stats.claimRuns.Add(1)
		// A short claim means the per-host cap or an empty queue held it
		// back: asking again before a lease ends finds nothing more.
		short := len(due) < int(free)
		s.short.Store(short)
		if short {
			return
		}
	}
}

// work runs claimed agents. A finished crawl frees room in the queue, so it
// asks for more, unless the last claim came back short and the result went
// to the batch recorder: its lease lives until the batch is written (which
// kicks), so claiming now would only find the same hosts at their cap.
func (s *Scheduler) work() {
	for a := range s.jobs {
		s.run(a)
		if s.inFlight.Add(-1) == 0 && s.results != nil {
			select {
			case s.idle <- struct{}{}:
			default:
			}
		}
		if s.results == nil || !s.short.Load() {
			s.Kick()
		}
	}
}

// run crawls one claimed agent and records the result (or hands it to the
// batch recorder, recordLoop), within its lease:
// the crawl gets at most half the lease TTL and must end a quarter TTL
// before the lease does, so the write lands while the lease is still ours.
// An agent that waited in the queue until less is left is skipped (its
// lease expires and it is claimed again), as are queued agents at
// Shutdown: only crawls already running are finished. The in-process host
// cap backs up the database's: if a lease expired under a crawl that ran
// long, the agent's host may have been claimed again meanwhile.
func (s *Scheduler) run(a registry.DueAgent) {
	budget := min(s.cfg.LeaseTTL/2, a.LeaseUntil.Sub(s.cfg.Now())-s.cfg.LeaseTTL/4)
	select {
	case <-s.stop:
		return
	default:
	}
	if budget <= 0 {
		s.stats.expired.Add(1)
		s.log.Warn("claimed agent skipped: its lease ran out in the queue", "agent_id", a.ID)
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, budget)
	release, err := s.hosts.Acquire(ctx, a.Host, fetch.UseCrawl)
	if err != nil {
		cancel()
		// The budget ran out waiting for the host's other crawls: not the
		// host's fault, nothing to record; the lease expires and the agent
		// is claimed again.
		s.stats.expired.Add(1)
		s.log.Warn("claimed agent skipped: its host stayed busy", "agent_id", a.ID)
		return
	}
	res, ok := s.process(ctx, a)
	release()
	cancel()
	if !ok {
		return
	}
	if s.results != nil {
		s.results <- finished{id: a.ID, res: res}
		return
	}
	s.settle(a.ID, res, s.cfg.Registry.RecordFetch(s.ctx, s.cfg.Owner, a.ID, res))
}

// Stats are counters since the scheduler was built.
type Stats struct {
	ClaimRuns    int64 // claim transactions run
	Claimed      int64 // agents claimed
	Recorded     int64 // results written
	LeaseLost    int64 // results dropped because the agent was removed or taken over
	RecordErrors int64 // results the registry refused for another reason
	Expired      int64 // claimed agents skipped because their lease ran out in the queue or waiting for their host
	// Abandoned counts results not recorded because Shutdown ran out of
	// time while they were being written.
	Abandoned int64
	// Batches counts RecordFetches transactions (retries included); zero
	// when the registry records one result at a time.
	Batches  int64
	InFlight int64 // claimed and not yet finished (running or queued)
}

type stats struct {
	claimRuns, claimed, recorded, leaseLost, recordErrors, expired, abandoned, batches atomic.Int64
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	return Stats{
		ClaimRuns:    s.stats.claimRuns.Load(),
		Claimed:      s.stats.claimed.Load(),
		Recorded:     s.stats.recorded.Load(),
		LeaseLost:    s.stats.leaseLost.Load(),
		RecordErrors: s.stats.recordErrors.Load(),
		Expired:      s.stats.expired.Load(),
		Abandoned:    s.stats.abandoned.Load(),
		Batches:      s.stats.batches.Load(),
		InFlight:     s.inFlight.Load(),
	}
}
