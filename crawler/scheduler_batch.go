package crawler

import (
	"context"
	"errors"

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

// finished is a crawl result on its way to the registry.
type finished struct {
	id  string
	res registry.FetchResult
}

// record writes finished crawls: a batch in one transaction, or each
// result with RecordFetch when the Registry is no BatchRegistry. The
// runner collects a batch (leasework: BatchSize results, BatchDelay after
// the first, or as soon as nothing is left running or queued); a worker
// hands its result over and goes on to the next agent, and the lease stays
// held until the batch is written, so the per-host cap in the database
// still counts it.
//
// A batch that fails as a whole because the database is unavailable
// (SQLite busy, PostgreSQL restarting: the registry's ErrUnavailable) is
// tried once more; if that fails too, its results are logged and dropped,
// and their leases left to expire, after which the agents are due again
// and crawled anew (docs/threats.md B.27). Holding results longer would
// only hold their leases longer.
func (s *Scheduler) record(ctx context.Context, batch []finished) {
	if s.batch == nil {
		for _, f := range batch {
			s.settle(ctx, f.id, f.res, s.cfg.Registry.RecordFetch(ctx, s.cfg.Owner, f.id, f.res))
		}
		return
	}
	in := make([]registry.AgentFetch, len(batch))
	for i, f := range batch {
		in[i] = registry.AgentFetch{AgentID: f.id, Result: f.res}
	}
	s.stats.batches.Add(1)
	errs, err := s.batch.RecordFetches(ctx, s.cfg.Owner, in)
	if err != nil && errors.Is(err, registry.ErrUnavailable) && ctx.Err() == nil {
		s.log.Warn("record crawl results: retrying the batch", "results", len(batch), "err", err)
		s.stats.batches.Add(1)
		errs, err = s.batch.RecordFetches(ctx, s.cfg.Owner, in)
	}
	if err != nil && ctx.Err() == nil {
		s.log.Error("record crawl results: batch dropped, leases left to expire", "results", len(batch), "err", err)
	}
	for i, f := range batch {
		rerr := err
		if err == nil {
			rerr = errs[i]
		}
		s.settle(ctx, f.id, f.res, rerr)
	}
}

// settle counts and reports one result's answer from the registry.
func (s *Scheduler) settle(ctx context.Context, id string, res registry.FetchResult, err error) {
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
	case ctx.Err() != nil:
		// Shutdown ran out of time; the lease is released or expires.
		s.stats.abandoned.Add(1)
	default:
		s.stats.recordErrors.Add(1)
		s.log.Error("record crawl result", "agent_id", id, "err", err)
	}
}
