// Package prober checks that approved agents answer A2A, not just that
// their cards load (docs/liveness.md). Every interface of an agent's
// current card is probed on a schedule with a request that can create no
// work, through the hardened fetcher of package fetch (its dialer, address policy,
// limits) and under the crawler's per-host cap; the results are stored as
// history in the registry, which derives each agent's liveness.
//
// Agents are leased like the crawler's claims (registry.ClaimProbes), so
// several replicas sharing one database never probe one interface twice in
// one interval.
package prober

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/leasework"
	"github.com/cardexhq/cardex/registry"
)

// Registry is what the prober needs of the registry; *registry.Service
// implements it.
type Registry interface {
	ClaimProbes(ctx context.Context, owner string, now time.Time, leaseTTL time.Duration, limit, perHost int) ([]registry.DueProbe, error)
	RecordProbes(ctx context.Context, owner string, rounds []registry.ProbeRound) ([]error, error)
	ReleaseProbeLeases(ctx context.Context, owner string) error
	ProbeLeaseHeld(ctx context.Context, owner, id string, now time.Time) (bool, error)
	PruneProbes(ctx context.Context, now time.Time, keepProbes, keepDays time.Duration) (int64, error)
	CountProbes(ctx context.Context, now time.Time) (registry.ProbeCounts, error)
}

// Config configures a Prober. Registry and Fetcher are required; zero
// values take the defaults named.
type Config struct {
	Registry Registry
	// Fetcher is the crawler's: every probe goes through its dialer and
	// network policy.
	Fetcher *fetch.Fetcher
	// Hosts is the per-host politeness budget shared with the crawler and
	// claim verification; nil builds one of PerHost slots. Probes take at
	// most its Share() of a host's slots (docs/liveness.md).
	Hosts *fetch.HostSlots
	// MaxInterfaces caps the interfaces probed per agent and round
	// (--probe-max-interfaces, default 8), MaxOffDomain those among them
	// off the card's registrable domain (--probe-max-off-domain, default
	// 2; negative: none), which are probed only for agents a curator
	// approved (docs/liveness.md "What is probed", docs/threats.md K.98,
	// K.99).
	MaxInterfaces int
	MaxOffDomain  int
	// Interval between probes of an agent (--probe-interval, 15m),
	// jittered by ±Jitter (default 0.1; negative disables).
	Interval time.Duration
	Jitter   float64
	// MaxBackoff caps the back-off of an unreachable agent (default 16 ×
	// Interval, at most 24h) and a Retry-After.
	MaxBackoff time.Duration
	// Workers probing agents at once (--probe-workers, 16).
	Workers int
	// RateFloor is the least number of agents' rounds started per second
	// (--probe-rate-floor, default DefaultRateFloor); the rate is the
	// larger of it and the approved agents over 0.8 × Interval, counted
	// every CountEvery (default 1m) (docs/liveness.md "Pacing").
	RateFloor  float64
	CountEvery time.Duration
	// PerHost caps probe leases per host in the claim, counting crawl
	// leases (default 2, like --crawl-per-host).
	PerHost int
	// Timeout of one interface's probe (default 5s).
	Timeout time.Duration
	// LeaseTTL of a claim (default 2m).
	LeaseTTL time.Duration
	// Tick is how often the database is asked for due agents (default the
	// smaller of Interval and 10s).
	Tick time.Duration
	// KeepProbes is how long each probe is kept (--probe-history, default
	// 48h: the 24-hour uptime and p50 need one day), KeepDays how long the
	// daily roll-ups are (default 90 days); PruneEvery how often old rows
	// are deleted (default 1h).
	KeepProbes, KeepDays, PruneEvery time.Duration
	// BatchSize rounds are recorded per transaction (default 32), a lone
	// round waiting at most BatchDelay (default 50ms).
	BatchSize  int
	BatchDelay time.Duration
	Owner      string
	Now        func() time.Time
	Rand       func() float64
	Logger     *slog.Logger
	// Pace, when set, lets each write of probe rounds wait while
	// interactive requests run (leasework.Config.Pace, pace.Gate).
	Pace func(ctx context.Context) (done func(), err error)
	// Observe is called for every probe (metrics); it must not block.
	Observe func(registry.ProbeResult)
}

// Defaults of the per-agent caps (docs/configuration.md).
const (
	DefaultMaxInterfaces = 8
	DefaultMaxOffDomain  = 2
)

func (c *Config) withDefaults() error {
	switch {
	case c.Registry == nil:
		return errors.New("prober: a registry is required")
	case c.Fetcher == nil:
		return errors.New("prober: a fetcher is required")
	case c.Interval < 0:
		return errors.New("prober: the probe interval must not be negative")
	case c.Jitter >= 1:
		return errors.New("prober: jitter must be below 1")
	case math.IsNaN(c.RateFloor) || math.IsInf(c.RateFloor, 0):
		return errors.New("prober: the rate floor must be a number")
	}
	if c.Interval == 0 {
		c.Interval = 15 * time.Minute
	}
	if c.Jitter == 0 {
		c.Jitter = 0.1
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = min(16*c.Interval, 24*time.Hour)
	}
	c.MaxBackoff = max(c.MaxBackoff, c.Interval)
	if c.Workers <= 0 {
		c.Workers = 16
	}
	if c.RateFloor <= 0 {
		c.RateFloor = DefaultRateFloor
	}
	if c.CountEvery <= 0 {
		c.CountEvery = time.Minute
	}
	if c.PerHost <= 0 {
		c.PerHost = 2
	}
	if c.Hosts == nil {
		c.Hosts = fetch.NewHostSlots(c.PerHost)
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	if c.MaxInterfaces <= 0 {
		c.MaxInterfaces = DefaultMaxInterfaces
	}
	if c.MaxOffDomain < 0 {
		c.MaxOffDomain = 0
	} else if c.MaxOffDomain == 0 {
		c.MaxOffDomain = DefaultMaxOffDomain
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 2 * time.Minute
	}
	if c.Tick <= 0 {
		c.Tick = min(c.Interval, 10*time.Second)
	}
	if c.KeepProbes <= 0 {
		c.KeepProbes = 48 * time.Hour
	}
	if c.KeepDays <= 0 {
		c.KeepDays = 90 * 24 * time.Hour
	}
	if c.PruneEvery <= 0 {
		c.PruneEvery = time.Hour
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 32
	}
	if c.BatchDelay <= 0 {
		c.BatchDelay = 50 * time.Millisecond
	}
	if c.Owner == "" {
		c.Owner = registry.DefaultOwner()
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
	return nil
}

// Prober probes due agents on the lease-worker runner the crawler uses
// (leasework): a ticker or Kick asks the database for due agents (leased
// to this prober) into a queue of twice the pool, as many as the pace
// allows (pacer), a fixed pool of workers probes their interfaces, and
// finished rounds are recorded in batches. Old history is pruned after a
// claim every PruneEvery.
type Prober struct {
	cfg       Config
	log       *slog.Logger
	runner    *leasework.Runner[registry.DueProbe, registry.ProbeRound]
	pace      *pacer
	lastPrune time.Time // touched only by the runner's dispatcher

	stats struct{ claimed, recorded, leaseLost, probes, expired atomic.Int64 }
}

// New checks cfg and builds a stopped prober.
func New(cfg Config) (*Prober, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	p := &Prober{cfg: cfg, log: cfg.Logger.With("owner", cfg.Owner)}
	// A claim the pace cut short waits for at most the runner's minimum
	// claim (half the room) of tokens.
	room := 2 * cfg.Workers
	p.pace = newPacer(cfg.RateFloor, cfg.Interval, cfg.CountEvery, room/2, p.Kick)
	r, err := leasework.New(leasework.Config[registry.DueProbe, registry.ProbeRound]{
		Claim: p.claim, Run: p.round, Record: p.record, Release: p.release, Wake: p.prune,
		Workers: cfg.Workers, Room: room, Tick: cfg.Tick,
		BatchSize: cfg.BatchSize, BatchDelay: cfg.BatchDelay, Pace: cfg.Pace,
	})
	if err != nil {
		return nil, err
	}
	p.runner = r
	return p, nil
}

// Stats are counters since the prober was built.
type Stats struct {
	Claimed, Recorded, LeaseLost, Probes int64
	// Expired counts claimed agents skipped because too little of their
	// lease was left when a worker took them.
	Expired int64
}

// Stats returns the prober's counters.
func (p *Prober) Stats() Stats {
	return Stats{Claimed: p.stats.claimed.Load(), Recorded: p.stats.recorded.Load(),
		LeaseLost: p.stats.leaseLost.Load(), Probes: p.stats.probes.Load(), Expired: p.stats.expired.Load()}
}

// Start runs the prober until Shutdown. It is a no-op after the first call
// or after Shutdown.
func (p *Prober) Start() { p.runner.Start() }

// Kick asks for due agents now; it never blocks.
func (p *Prober) Kick() { p.runner.Kick() }

// Shutdown stops claiming, lets running probes finish and record within
// ctx (abandoning them when ctx ends), then releases this prober's leases.
func (p *Prober) Shutdown(ctx context.Context) error {
	err := p.runner.Shutdown(ctx)
	p.pace.stop()
	return err
}

// claim leases at most free due agents, and no more than the pace allows
// (docs/liveness.md "Pacing"): a claim the pace cuts short comes back
// short, so the runner waits, and the pacer kicks it when tokens are back.
func (p *Prober) claim(ctx context.Context, free int) ([]registry.DueProbe, error) {
	p.pace.refresh(ctx, p.cfg.Registry, p.cfg.Now(), func(err error) { p.log.Warn("count agents to probe", "err", err) })
	n := p.pace.take(free)
	if n == 0 {
		return nil, nil
	}
	due, err := p.cfg.Registry.ClaimProbes(ctx, p.cfg.Owner, p.cfg.Now(), p.cfg.LeaseTTL, n, p.cfg.PerHost)
	if err != nil {
		p.pace.giveBack(n)
		if !errors.Is(err, context.Canceled) {
			p.log.Error("claim agents to probe", "err", err)
		}
		return nil, err
	}
	p.pace.giveBack(n - len(due))
	p.stats.claimed.Add(int64(len(due)))
	return due, nil
}

// prune deletes old history every PruneEvery.
func (p *Prober) prune(ctx context.Context) {
	now := p.cfg.Now()
	if now.Sub(p.lastPrune) < p.cfg.PruneEvery {
		return
	}
	p.lastPrune = now
	n, err := p.cfg.Registry.PruneProbes(ctx, now, p.cfg.KeepProbes, p.cfg.KeepDays)
	if err != nil {
		p.log.Warn("prune probe history", "err", err)
		return
	}
	if n > 0 {
		p.log.Info("pruned probe history", "rows", n)
	}
}

// round probes one claimed agent, unless it waited in the queue until its
// lease is nearly gone: then the lease expires and the agent is claimed
// again.
func (p *Prober) round(ctx context.Context, d registry.DueProbe) (registry.ProbeRound, bool) {
	if p.roundBudget(d) < p.cfg.Timeout {
		p.stats.expired.Add(1)
		p.log.Warn("claimed agent skipped: its probe lease ran out in the queue", "agent_id", d.ID)
		return registry.ProbeRound{}, false
	}
	return p.Probe(ctx, d), true
}

// record writes a batch of finished rounds. It runs on past Shutdown's
// deadline (30 s at most): a finished round is worth its write.
func (p *Prober) record(ctx context.Context, batch []registry.ProbeRound) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	errs, err := p.cfg.Registry.RecordProbes(ctx, p.cfg.Owner, batch)
	cancel()
	if err != nil {
		p.log.Error("record probes", "rounds", len(batch), "err", err)
	}
	for _, e := range errs {
		switch {
		case err != nil:
		case e == nil:
			p.stats.recorded.Add(1)
		case errors.Is(e, registry.ErrLeaseLost), errors.Is(e, registry.ErrNotFound):
			p.stats.leaseLost.Add(1)
		default:
			p.log.Warn("probe round not recorded", "err", e)
		}
	}
}

func (p *Prober) release(ctx context.Context) error {
	if err := p.cfg.Registry.ReleaseProbeLeases(ctx, p.cfg.Owner); err != nil {
		return fmt.Errorf("prober: release leases: %w", err)
	}
	return nil
}

// Round claims what is due now, probes it and records it, in the calling
// goroutine: the whole pipeline once, for the CLI, tests and benchmarks.
// It returns the number of rounds recorded.
func (p *Prober) Round(ctx context.Context) (int, error) {
	due, err := p.cfg.Registry.ClaimProbes(ctx, p.cfg.Owner, p.cfg.Now(), p.cfg.LeaseTTL, max(p.cfg.Workers, 1)*4, p.cfg.PerHost)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	rounds := make([]registry.ProbeRound, len(due))
	var wg sync.WaitGroup
	sem := make(chan struct{}, p.cfg.Workers)
	for i, d := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rounds[i] = p.Probe(ctx, d)
		})
	}
	wg.Wait()
	errs, err := p.cfg.Registry.RecordProbes(ctx, p.cfg.Owner, rounds)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range errs {
		if e == nil {
			n++
		}
	}
	p.stats.recorded.Add(int64(n))
	return n, nil
}

func (p *Prober) backoff(failures int) time.Duration {
	d := p.cfg.Interval
	for i := 1; i < failures && d < p.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.cfg.MaxBackoff)
}

func (p *Prober) jitter(d time.Duration) time.Duration {
	if p.cfg.Jitter == 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + p.cfg.Jitter*(2*p.cfg.Rand()-1)))
}
