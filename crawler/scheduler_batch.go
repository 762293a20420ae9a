package crawler

import (
	"context"
	"errors"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// BatchRegistry is a Registry that records many crawl results in one
// transaction (*registry.Service does). When the scheduler's Registry
// implements it, finished crawls are recorded in batches: the database
// then spends one commit, one trace trim and a few multi-row inserts per
// batch instead of per result (docs/benchmarks.md "Crawl pipeline"). A
// Registry without it (a wrapper that adds metrics to RecordFetch, say) is
// called once per result as before.
type BatchRegistry interface {
	RecordFetches(ctx context.Context, owner string, batch []registry.AgentFetch) ([]error, error)
}

// finished is a crawl result waiting in the recorder's batch.
type finished struct {
	id  string
	res registry.FetchResult
}

// recordLoop collects finished crawls and records them a batch at a time:
// when BatchSize results are waiting, BatchDelay after the first of a
// batch arrived, or as soon as nothing is left running or queued (idle:
// no result is coming to fill the batch, and the leases it holds may be
// all that keeps the per-host cap from letting more agents be claimed),
// whichever comes first. A worker hands its result over and
// goes on to the next agent; the lease stays held until the batch is
// written, so the per-host cap in the database still counts it. When the
// results channel closes (Shutdown, after the workers are done) the last
// batch is written and the loop ends.
func (s *Scheduler) recordLoop() {
	defer close(s.recorderDone)
	timer := time.NewTimer(s.cfg.BatchDelay)
	timer.Stop()
	var batch []finished
	for {
		select {
		case f, ok := <-s.results:
			if !ok {
				s.recordBatch(batch)
				return
			}
			batch = append(batch, f)
			if len(batch) == 1 {
				timer.Reset(s.cfg.BatchDelay)
			}
			if len(batch) < s.cfg.BatchSize {
				continue
			}
			timer.Stop()
		case <-timer.C:
		case <-s.idle:
			if len(batch) == 0 {
				continue
			}
			batch = s.drainResults(batch)
			timer.Stop()
		}
		s.recordBatch(batch)
		batch = nil
	}
}

// drainResults adds the results already handed over (the idle signal may
// overtake the last of them).
func (s *Scheduler) drainResults(batch []finished) []finished {
	for len(batch) < s.cfg.BatchSize {
		select {
		case f, ok := <-s.results:
			if !ok {
				return batch // Shutdown: the loop's next receive ends it
			}
			batch = append(batch, f)
		default:
			return batch
		}
	}
	return batch
}

// recordBatch writes one batch. A batch that fails as a whole because the
// database is unavailable (SQLite busy, PostgreSQL restarting: the
// registry's ErrUnavailable) is tried once more; if that fails too, its
// results are logged and dropped, and their leases left to expire, after
// which the agents are due again and crawled anew (docs/threats.md B.27).
// Holding results longer would only hold their leases longer.
func (s *Scheduler) recordBatch(batch []finished) {
	if len(batch) == 0 {
		return
	}
	in := make([]registry.AgentFetch, len(batch))
	for i, f := range batch {
		in[i] = registry.AgentFetch{AgentID: f.id, Result: f.res}
	}
	br := s.cfg.Registry.(BatchRegistry)
	s.stats.batches.Add(1)
	errs, err := br.RecordFetches(s.ctx, s.cfg.Owner, in)
	if err != nil && errors.Is(err, registry.ErrUnavailable) && s.ctx.Err() == nil {
		s.log.Warn("record crawl results: retrying the batch", "results", len(batch), "err", err)
		s.stats.batches.Add(1)
		errs, err = br.RecordFetches(s.ctx, s.cfg.Owner, in)
	}
	if err != nil && s.ctx.Err() == nil {
		s.log.Error("record crawl results: batch dropped, leases left to expire", "results", len(batch), "err", err)
	}
	for i, f := range batch {
		rerr := err
		if err == nil {
			rerr = errs[i]
		}
		s.settle(f.id, f.res, rerr)
	}
	// The written results' leases are free now: agents of hosts that were
	// at their cap may be claimable.
	s.Kick()
}

// settle counts and reports one result's answer from the registry.
func (s *Scheduler) settle(id string, res registry.FetchResult, err error) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(res, err)
	}
	switch {
	case err == nil:
		s.stats.recorded.Add(1)
	case errors.Is(err, registry.ErrLeaseLost):
		// docs/threats.md F.64: the agent was removed (or its lease taken
		// over) while we crawled; the registry dropped the write.
		s.stats.leaseLost.Add(1)
		s.log.Info("crawl result dropped: lease lost", "agent_id", id)
	case s.ctx.Err() != nil:
		// Shutdown ran out of time; the lease is released or expires.
		s.stats.abandoned.Add(1)
	default:
		s.stats.recordErrors.Add(1)
		s.log.Error("record crawl result", "agent_id", id, "err", err)
	}
}
