package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
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

// Scheduler crawls due agents: cron ticks, the database picks due agents
// and leases them (at most PerHost per host), a fixed pool of workers runs
// the pipeline and records each result (in batches when the Registry is a
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

	cron  *cron.Cron
	kick  chan struct{} // a tick, Kick, or a worker freed: look for work
	jobs  chan registry.DueAgent
	stop  chan struct{}
	ctx   context.Context // cancelled when Shutdown runs out of time
	abort context.CancelFunc

	dispatcherDone chan struct{}
	// results feeds recordLoop; nil when results are recorded one at a
	// time on the workers.
	results      chan finished
	idle         chan struct{} // the last running or queued crawl finished
	recorderDone chan struct{}
	workers      sync.WaitGroup
	startOnce    sync.Once
	stopOnce     sync.Once
	started      atomic.Bool

	inFlight atomic.Int64
	short    atomic.Bool // the last claim got fewer agents than it asked for
	hosts    *fetch.HostSlots
	stats    stats
}

// NewScheduler checks cfg and builds a stopped scheduler.
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	ctx, abort := context.WithCancel(context.Background())
	s := &Scheduler{
		cfg:            cfg,
		log:            cfg.Logger.With("owner", cfg.Owner),
		pipe:           &Pipeline{Fetcher: cfg.Fetcher, Verifier: cfg.Verifier},
		kick:           make(chan struct{}, 1),
		jobs:           make(chan registry.DueAgent, 4*cfg.Workers),
		stop:           make(chan struct{}),
		ctx:            ctx,
		abort:          abort,
		dispatcherDone: make(chan struct{}),
		hosts:          cfg.Hosts,
	}
	if s.hosts == nil {
		s.hosts = fetch.NewHostSlots(cfg.PerHost)
	}
	s.process = s.crawl
	if _, ok := cfg.Registry.(BatchRegistry); ok && cfg.BatchSize > 0 {
		s.results = make(chan finished, cfg.BatchSize)
		s.idle = make(chan struct{}, 1)
		s.recorderDone = make(chan struct{})
	}
	s.cron = cron.New(cron.WithLocation(time.UTC))
	s.cron.Schedule(cron.Every(cfg.Tick), cron.FuncJob(s.Kick))
	return s, nil
}

// Owner is the lease owner this scheduler claims as.
func (s *Scheduler) Owner() string { return s.cfg.Owner }

// Start starts ticking and the worker pool, and looks for due agents at
// once. It is a no-op after the first call or after Shutdown.
func (s *Scheduler) Start() {
	s.startOnce.Do(func() {
		select {
		case <-s.stop:
			return
		default:
		}
		s.started.Store(true)
		if s.results != nil {
			go s.recordLoop()
		}
		for range s.cfg.Workers {
			s.workers.Go(s.work)
		}
		go s.dispatch()
		s.cron.Start()
		s.Kick()
	})
}

// Kick asks for due agents now instead of at the next tick: a submission
// or `POST /crawl` made an agent due (the database still decides). It never
// blocks.
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Shutdown stops ticking and claiming, lets in-flight crawls finish and
// record within ctx (abandoning them when ctx ends), writes the last batch
// of results, then releases every lease this scheduler still holds so
// other replicas take those agents at once. It returns ctx's error when
// crawls or writes had to be abandoned.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	var err error
	s.stopOnce.Do(func() {
		cronDone := s.cron.Stop()
		close(s.stop)
		if s.started.Load() {
			<-s.dispatcherDone
			close(s.jobs)
			drained := make(chan struct{})
			go func() {
				s.workers.Wait()
				if s.results != nil {
					close(s.results) // no worker sends any more
					<-s.recorderDone
				}
				close(drained)
			}()
			select {
			case <-drained:
			case <-ctx.Done():
				err = ctx.Err()
				s.abort()
				<-drained // bounded: every fetch and write observes s.ctx
			}
		}
		s.abort()
		<-cronDone.Done()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if rerr := s.cfg.Registry.ReleaseLeases(rctx, s.cfg.Owner); rerr != nil {
			err = errors.Join(err, fmt.Errorf("crawler: release leases: %w", rerr))
		}
		s.log.Info("crawler stopped", "recorded", s.stats.recorded.Load())
	})
	return err
}
