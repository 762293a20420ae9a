package crawler

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/leasework"
	"github.com/cardexhq/cardex/registry"
)

// claim leases at most free due agents. Agents held back by the per-host
// cap become claimable as crawls of their host are recorded, and each
// record kicks, so they are not left for the next tick.
func (s *Scheduler) claim(ctx context.Context, free int) ([]registry.DueAgent, error) {
	due, err := s.cfg.Registry.ClaimDue(ctx, s.cfg.Owner, s.cfg.Now(), s.cfg.LeaseTTL, free, s.cfg.PerHost)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			s.log.Error("claim due agents", "err", err)
		}
		return nil, err
	}
	s.stats.claimed.Add(int64(len(due)))
	s.stats.claimRuns.Add(1)
	return due, nil
}

// run crawls one claimed agent within its lease (leasework.Budget): the
// crawl gets at most half the lease TTL and must end a quarter TTL before
// the lease does, so the write lands while the lease is still ours. An
// agent that waited in the queue until less is left is skipped (its lease
// expires and it is claimed again), as are queued agents at Shutdown (the
// runner skips them): only crawls already running are finished. stop is
// cancelled when Shutdown runs out of time. The in-process host cap backs
// up the database's: if a lease expired under a crawl that ran long, the
// agent's host may have been claimed again meanwhile.
func (s *Scheduler) run(stop context.Context, a registry.DueAgent) (finished, bool) {
	budget := leasework.Budget(s.cfg.LeaseTTL, a.LeaseUntil, s.cfg.Now())
	if budget <= 0 {
		s.stats.expired.Add(1)
		s.log.Warn("claimed agent skipped: its lease ran out in the queue", "agent_id", a.ID)
		return finished{}, false
	}
	ctx, cancel := context.WithTimeout(stop, budget)
	defer cancel()
	release, err := s.hosts.Acquire(ctx, a.Host, fetch.UseCrawl)
	if err != nil {
		// The budget ran out waiting for the host's other crawls: not the
		// host's fault, nothing to record; the lease expires and the agent
		// is claimed again.
		s.stats.expired.Add(1)
		s.log.Warn("claimed agent skipped: its host stayed busy", "agent_id", a.ID)
		return finished{}, false
	}
	res, ok := s.process(ctx, a)
	release()
	if stop.Err() != nil {
		// Cut short by Shutdown: not the host's fault, not a failure to
		// record; the lease is released instead.
		return finished{}, false
	}
	return finished{id: a.ID, res: res}, ok
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
		InFlight:     s.runner.InFlight(),
	}
}
