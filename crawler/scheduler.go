package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/leasework"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
	"github.com/robfig/cron/v3"
)

// Registry is what the scheduler needs of the registry (CONTRIBUTING.md:
// the consumer declares the interface; *registry.Service implements it).
// The database decides what is due and who holds it (habit 7).
type Registry interface {
	ClaimDue(ctx context.Context, owner string, now time.Time, leaseTTL time.Duration, limit, perHost int) ([]registry.DueAgent, error)
	RecordFetch(ctx context.Context, owner, agentID string, res registry.FetchResult) error
	ReleaseLeases(ctx context.Context, owner string) error
}

// SchedulerConfig configures a Scheduler. Registry and Fetcher are
// required; every other zero value takes the docs/configuration.md default.
type SchedulerConfig struct {
	Registry Registry
	Fetcher  *fetch.Fetcher
	// Verifier checks signatures. Nil builds one whose key sets come
	// through Fetcher (same network policy, docs/security.md "Network policy") and whose cache
	// runs on Now.
	Verifier *verifier.Verifier
	Logger   *slog.Logger
	// Now is the clock of claims and schedules; default time.Now.
	Now func() time.Time
	// Rand yields [0, 1) for jitter; default math/rand/v2.
	Rand func() float64
	// Owner names this scheduler's leases; default registry.DefaultOwner().
	Owner string
	// Tick is how often cron asks the database for due agents (--crawl-tick,
	// 10s; whole seconds).
	Tick time.Duration
	// Workers is the size of the fixed worker pool (--crawl-workers, 32).
	Workers int
	// PerHost caps fetches in flight per host (--crawl-per-host, 2).
	PerHost int
	// Hosts is the in-process per-host cap, shared with the liveness
	// prober; nil builds one of PerHost slots.
	Hosts *fetch.HostSlots
	// LeaseTTL is how long a claim holds an agent (--lease-ttl, 2m). A
	// crashed worker's agent is claimable again after it (docs/threats.md
	// B.27).
	LeaseTTL time.Duration
	Schedule Schedule
	// BatchSize is how many finished crawls are recorded in one
	// transaction when Registry is a BatchRegistry (default 64; negative
	// records each result on its worker with RecordFetch). BatchDelay is
	// the longest a finished crawl waits for its batch to fill (default
	// 50ms): a lone result is written that long after it finished.
	BatchSize  int
	BatchDelay time.Duration
	// Pace, when set, lets each write of finished crawls wait while
	// interactive requests run (leasework.Config.Pace, pace.Gate).
	Pace func(ctx context.Context) (done func(), err error)
	// Observe, when set, is called after each crawl with the result and the
	// registry's answer to it (nil, registry.ErrLeaseLost or another
	// error): the hook for metrics (attempts by class, fetch durations). It
	// runs on the worker or the batch recorder and must not block.
	Observe func(res registry.FetchResult, recordErr error)
}

func (c *SchedulerConfig) withDefaults() error {
	if c.Registry == nil {
		return errors.New("crawler: scheduler needs a registry")
	}
	if c.Fetcher == nil {
		return errors.New("crawler: scheduler needs a fetcher")
	}
	if err := c.Schedule.Validate(); err != nil {
		return err
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = mrand.Float64
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Verifier == nil {
		c.Verifier = verifier.New(verifier.Config{Fetcher: c.Fetcher, Now: c.Now, Logger: c.Logger})
	}
	if c.Owner == "" {
		c.Owner = registry.DefaultOwner()
	}
	if c.Tick <= 0 {
		c.Tick = 10 * time.Second
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.PerHost <= 0 {
		c.PerHost = 2
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 2 * time.Minute
	}
	if c.BatchSize == 0 {
		c.BatchSize = 64
	}
	if c.BatchDelay <= 0 {
		c.BatchDelay = 50 * time.Millisecond
	}
	c.Schedule = c.Schedule.withDefaults()
	return nil
}

// Scheduler crawls due agents on the lease-worker runner (leasework) the
// prober uses too: every Tick, the database picks due agents and leases
// them (at most PerHost per host), a fixed pool of workers runs the
// pipeline and records each result (in batches when the Registry is a
// BatchRegistry, scheduler_batch.go). Several schedulers (replicas) may
// share one database; leases keep them from fetching one agent twice at
// once (docs/threats.md B.27).
type Scheduler struct {
	cfg  SchedulerConfig
	log  *slog.Logger
	pipe *Pipeline
	// process crawls one claimed agent; ok is false when there is nothing
	// to record (the crawl was abandoned at shutdown). Tests of the pure
	// scheduling logic replace it.
	process func(ctx context.Context, a registry.DueAgent) (res registry.FetchResult, ok bool)

	runner *leasework.Runner[registry.DueAgent, finished]
	// cron ticks the runner every Tick (--crawl-tick, whole seconds): the
	// schedule of docs/configuration.md, the runner itself only claims
	// when kicked.
	cron    *cron.Cron
	stopped atomic.Bool
	// batch records results a batch at a time; nil when each is recorded
	// on its worker with RecordFetch.
	batch BatchRegistry
	hosts *fetch.HostSlots
	stats stats
}

// NewScheduler checks cfg and builds a stopped scheduler.
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	s := &Scheduler{
		cfg:   cfg,
		log:   cfg.Logger.With("owner", cfg.Owner),
		pipe:  &Pipeline{Fetcher: cfg.Fetcher, Verifier: cfg.Verifier},
		hosts: cfg.Hosts,
	}
	if s.hosts == nil {
		s.hosts = fetch.NewHostSlots(cfg.PerHost)
	}
	s.process = s.crawl
	batchSize := 0
	if br, ok := cfg.Registry.(BatchRegistry); ok && cfg.BatchSize > 0 {
		s.batch, batchSize = br, cfg.BatchSize
	}
	r, err := leasework.New(leasework.Config[registry.DueAgent, finished]{
		Claim: s.claim, Run: s.run, Record: s.record, Release: s.release,
		Workers: cfg.Workers,
		// The room is four times the pool: claimed agents queue for the
		// workers, so the pool stays busy while the next claim runs, and a
		// claim runs only once half of the room is free (or nothing is
		// outstanding), so the database sees one claim transaction per
		// batch of about two pools' worth of agents rather than one per
		// crawl. A claim scans the due agents (registry.ClaimDue) and is
		// the most expensive statement of the crawl: in the 10,000-agent
		// benchmark on SQLite, going from a room of one pool to four cut
		// claims from ~1,250 to ~190 per round and raised throughput by
		// about half (docs/benchmarks.md).
		//
		// A queued agent's lease keeps ticking. With the policy's 10 s
		// fetch limit a full queue drains in about 40 s, well inside the
		// 2 min lease; run skips an agent whose lease has too little time
		// left rather than race its expiry.
		Room:      4 * cfg.Workers,
		BatchSize: batchSize, BatchDelay: cfg.BatchDelay,
		Pace: cfg.Pace,
	})
	if err != nil {
		return nil, err
	}
	s.runner = r
	s.cron = cron.New(cron.WithLocation(time.UTC))
	// Whole seconds, at least one (docs/configuration.md --crawl-tick).
	s.cron.Schedule(cron.Every(max(time.Second, cfg.Tick.Truncate(time.Second))), cron.FuncJob(s.Kick))
	return s, nil
}

// Owner is the lease owner this scheduler claims as.
func (s *Scheduler) Owner() string { return s.cfg.Owner }

// Start starts ticking and the worker pool, and looks for due agents at
// once. It is a no-op after the first call or after Shutdown.
func (s *Scheduler) Start() {
	if s.stopped.Load() {
		return
	}
	s.runner.Start()
	s.cron.Start()
}

// Kick asks for due agents now instead of at the next tick: a submission
// or `POST /crawl` made an agent due (the database still decides). It never
// blocks.
func (s *Scheduler) Kick() { s.runner.Kick() }

// Shutdown stops ticking and claiming, lets in-flight crawls finish and
// record within ctx (abandoning them when ctx ends), writes the last batch
// of results, then releases every lease this scheduler still holds so
// other replicas take those agents at once. It returns ctx's error when
// crawls or writes had to be abandoned.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.stopped.Store(true)
	<-s.cron.Stop().Done()
	return s.runner.Shutdown(ctx)
}

// release gives up the leases left (agents still queued at Shutdown or
// whose results were abandoned).
func (s *Scheduler) release(ctx context.Context) error {
	err := s.cfg.Registry.ReleaseLeases(ctx, s.cfg.Owner)
	if err != nil {
		err = fmt.Errorf("crawler: release leases: %w", err)
	}
	s.log.Info("crawler stopped", "recorded", s.stats.recorded.Load())
	return err
}
