// Package leasework runs leased jobs: the loop the crawler's scheduler and
// the liveness prober share. A dispatcher claims jobs (the database leases
// them to this process) into a bounded room whenever it is kicked or the
// ticker fires, a fixed pool of workers runs them, and finished results are
// recorded a batch at a time. Shutdown stops claiming, lets running jobs
// finish and record within its context, writes the last batch and releases
// the leases still held, so another replica takes those jobs at once
// (docs/threats.md B.27).
//
// What a job is, how it is claimed, run and recorded is the caller's: the
// package imports nothing of Cardex.
package leasework

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Runner. Claim, Run and Record are required.
type Config[J, R any] struct {
	// Claim leases at most free jobs (any beyond are not run: their
	// leases expire). An error ends the claim pass (the next kick or tick
	// tries again); Claim logs it.
	Claim func(ctx context.Context, free int) ([]J, error)
	// Run runs one claimed job; ok is false when there is nothing to
	// record (the job was skipped or abandoned).
	Run func(ctx context.Context, job J) (res R, ok bool)
	// Record writes finished results: a batch of at most BatchSize, or
	// each result alone on its worker when BatchSize ≤ 0. Its ctx is
	// cancelled when Shutdown runs out of time.
	Record func(ctx context.Context, batch []R)
	// Release, when set, gives up every lease still held; Shutdown calls
	// it once, last, with a context of its own (10 s, Shutdown's values).
	Release func(ctx context.Context) error
	// Pace, when set, is asked before each Record call and told when it
	// is done (pace.Gate.Background): while interactive requests run,
	// writing results waits its turn, and with it the workers handing
	// them over. It returns an error only when its ctx ends; the results
	// are then recorded anyway (Shutdown's bound applies).
	Pace func(ctx context.Context) (done func(), err error)
	// Wake, when set, runs on the dispatcher after each claim pass
	// (housekeeping such as pruning old rows).
	Wake func(ctx context.Context)

	// Workers is the size of the fixed worker pool (required, > 0).
	Workers int
	// Room bounds the jobs claimed and not yet run (queued or running);
	// default 4 × Workers. Queued jobs keep the pool busy while the next
	// claim runs.
	Room int
	// MinClaim is the free room a claim waits for while jobs are
	// outstanding (default half the room, at least 1): one claim
	// transaction per batch of jobs rather than one per finished job.
	MinClaim int
	// Tick is how often the dispatcher claims unkicked; 0: only Kick.
	Tick time.Duration
	// BatchSize results are recorded per Record call; BatchDelay (default
	// 50ms) is the longest a result waits for its batch to fill. ≤ 0:
	// each result is recorded alone on its worker.
	BatchSize  int
	BatchDelay time.Duration
}

// Runner runs leased jobs of type J with results of type R.
type Runner[J, R any] struct {
	cfg Config[J, R]

	kick  chan struct{} // a tick, Kick, a finished job or a written batch: look for work
	jobs  chan J
	stop  chan struct{}
	ctx   context.Context // cancelled when Shutdown runs out of time
	abort context.CancelFunc

	dispatcherDone chan struct{}
	// results feeds the recorder; nil when results are recorded on the
	// workers.
	results      chan R
	idle         chan struct{} // the last running or queued job finished
	recorderDone chan struct{}
	workers      sync.WaitGroup
	startOnce    sync.Once
	stopOnce     sync.Once
	started      atomic.Bool

	inFlight atomic.Int64
	short    atomic.Bool // the last claim got fewer jobs than it asked for
}

// New checks cfg and builds a stopped runner.
func New[J, R any](cfg Config[J, R]) (*Runner[J, R], error) {
	switch {
	case cfg.Claim == nil || cfg.Run == nil || cfg.Record == nil:
		return nil, errors.New("leasework: Claim, Run and Record are required")
	case cfg.Workers <= 0:
		return nil, errors.New("leasework: Workers must be positive")
	case cfg.Tick < 0:
		return nil, errors.New("leasework: Tick must not be negative")
	}
	if cfg.Room <= 0 {
		cfg.Room = 4 * cfg.Workers
	}
	if cfg.MinClaim <= 0 {
		cfg.MinClaim = max(1, cfg.Room/2)
	}
	cfg.MinClaim = min(cfg.MinClaim, cfg.Room)
	if cfg.BatchDelay <= 0 {
		cfg.BatchDelay = 50 * time.Millisecond
	}
	ctx, abort := context.WithCancel(context.Background())
	r := &Runner[J, R]{
		cfg:            cfg,
		kick:           make(chan struct{}, 1),
		jobs:           make(chan J, cfg.Room),
		stop:           make(chan struct{}),
		ctx:            ctx,
		abort:          abort,
		dispatcherDone: make(chan struct{}),
	}
	if cfg.BatchSize > 0 {
		r.results = make(chan R, cfg.BatchSize)
		r.idle = make(chan struct{}, 1)
		r.recorderDone = make(chan struct{})
	}
	return r, nil
}

// Start starts the recorder, the worker pool and the dispatcher, and claims
// at once. It is a no-op after the first call or after Shutdown.
func (r *Runner[J, R]) Start() {
	r.startOnce.Do(func() {
		select {
		case <-r.stop:
			return
		default:
		}
		r.started.Store(true)
		if r.results != nil {
			go r.recordLoop()
		}
		for range r.cfg.Workers {
			r.workers.Go(r.work)
		}
		go r.dispatch()
		r.Kick()
	})
}

// Kick asks for a claim pass now instead of at the next tick. It never
// blocks.
func (r *Runner[J, R]) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// InFlight is the number of jobs claimed and not yet run (queued or
// running).
func (r *Runner[J, R]) InFlight() int64 { return r.inFlight.Load() }

// Shutdown stops ticking and claiming, lets running jobs finish and record
// within ctx (then cancels the context they run and record under), skips
// queued ones, writes the last batch, then calls Release. It returns ctx's
// error when jobs or writes had to be abandoned, joined with Release's.
// Later calls return nil at once.
func (r *Runner[J, R]) Shutdown(ctx context.Context) error {
	var err error
	r.stopOnce.Do(func() {
		close(r.stop)
		if r.started.Load() {
			drained := make(chan struct{})
			go func() {
				<-r.dispatcherDone
				close(r.jobs) // no claim sends any more
				r.workers.Wait()
				if r.results != nil {
					close(r.results) // no worker sends any more
					<-r.recorderDone
				}
				close(drained)
			}()
			select {
			case <-drained:
			case <-ctx.Done():
				err = ctx.Err()
				r.abort()
				<-drained // bounded: Claim, Run and Record observe r.ctx
			}
		}
		r.abort()
		if r.cfg.Release != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			err = errors.Join(err, r.cfg.Release(rctx))
		}
	})
	return err
}

// dispatch runs a claim pass on every kick or tick until Shutdown.
func (r *Runner[J, R]) dispatch() {
	defer close(r.dispatcherDone)
	var tick <-chan time.Time
	if r.cfg.Tick > 0 {
		t := time.NewTicker(r.cfg.Tick)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-r.stop:
			return
		case <-r.kick:
		case <-tick:
		}
		r.claim()
		if r.cfg.Wake != nil && !r.stopped() {
			r.cfg.Wake(r.ctx)
		}
	}
}

func (r *Runner[J, R]) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// claim fills the room until it is full or a claim comes back short. It
// claims only once MinClaim of the room is free (or nothing is
// outstanding): a finishing worker kicks again.
func (r *Runner[J, R]) claim() {
	room := int64(r.cfg.Room)
	for !r.stopped() {
		outstanding := r.inFlight.Load()
		free := room - outstanding
		if free <= 0 || (free < int64(r.cfg.MinClaim) && outstanding > 0) {
			return
		}
		jobs, err := r.cfg.Claim(r.ctx, int(free))
		if err != nil {
			return
		}
		jobs = jobs[:min(len(jobs), int(free))]
		for _, j := range jobs {
			r.inFlight.Add(1)
			r.jobs <- j // never blocks: the buffer holds the room and inFlight ≤ room
		}
		// A short claim means nothing more is claimable now (an empty
		// queue, or a per-host cap the held leases fill): asking again
		// before a lease ends finds nothing more.
		short := len(jobs) < int(free)
		r.short.Store(short)
		if short {
			return
		}
	}
}

// work runs claimed jobs. A finished job frees room, so it asks for more,
// unless the last claim came back short and the result went to the batch
// recorder: its lease lives until the batch is written (which kicks), so
// claiming now would only meet the same caps.
func (r *Runner[J, R]) work() {
	for j := range r.jobs {
		r.run(j)
		if r.inFlight.Add(-1) == 0 && r.results != nil {
			select {
			case r.idle <- struct{}{}:
			default:
			}
		}
		if r.results == nil || !r.short.Load() {
			r.Kick()
		}
	}
}

// run runs one job, unless Shutdown began while it was queued (only jobs
// already running are finished; a skipped job's lease is released), and
// records its result or hands it to the recorder.
func (r *Runner[J, R]) run(j J) {
	if r.stopped() {
		return
	}
	res, ok := r.cfg.Run(r.ctx, j)
	if !ok {
		return
	}
	if r.results != nil {
		r.results <- res
		return
	}
	r.write([]R{res})
}

// recordLoop collects results and records them a batch at a time: when
// BatchSize results are waiting, BatchDelay after the first of a batch
// arrived, or as soon as nothing is left running or queued (idle: no result
// is coming to fill the batch, and the leases it holds may be all that
// keeps a per-host cap from letting more jobs be claimed), whichever comes
// first. A worker hands its result over and goes on to the next job. When
// the results channel closes (Shutdown, after the workers are done) the
// last batch is written and the loop ends.
func (r *Runner[J, R]) recordLoop() {
	defer close(r.recorderDone)
	timer := time.NewTimer(r.cfg.BatchDelay)
	timer.Stop()
	var batch []R
	for {
		select {
		case res, ok := <-r.results:
			if !ok {
				r.record(batch)
				return
			}
			batch = append(batch, res)
			if len(batch) == 1 {
				timer.Reset(r.cfg.BatchDelay)
			}
			if len(batch) < r.cfg.BatchSize {
				continue
			}
			timer.Stop()
		case <-timer.C:
		case <-r.idle:
			// The idle signal may overtake the results handed over before
			// it: take them all, a full batch at a time.
			timer.Stop()
			for {
				batch = r.drain(batch)
				full := len(batch) == r.cfg.BatchSize
				r.record(batch)
				batch = nil
				if !full {
					break
				}
			}
			continue
		}
		r.record(batch)
		batch = nil
	}
}

// drain adds the results already handed over, up to a full batch.
func (r *Runner[J, R]) drain(batch []R) []R {
	for len(batch) < r.cfg.BatchSize {
		select {
		case res, ok := <-r.results:
			if !ok {
				return batch // Shutdown: the loop's next receive ends it
			}
			batch = append(batch, res)
		default:
			return batch
		}
	}
	return batch
}

// record writes one batch, then kicks: the written results' leases are
// free, so jobs held back by a per-host cap may be claimable.
func (r *Runner[J, R]) record(batch []R) {
	if len(batch) == 0 {
		return
	}
	r.write(batch)
	r.Kick()
}

// write records results once Pace lets it.
func (r *Runner[J, R]) write(batch []R) {
	if r.cfg.Pace != nil {
		if done, err := r.cfg.Pace(r.ctx); err == nil {
			defer done()
		}
	}
	r.cfg.Record(r.ctx, batch)
}

// Budget is how long a job leased until `until` may run at `now` under a
// lease of ttl: at most half the TTL, and it must end a quarter TTL before
// the lease does, so its result is written while the lease is still held
// and no other replica claims the job under it (docs/threats.md B.27,
// K.98). It is ≤ 0 when the job waited in the queue too long.
func Budget(ttl time.Duration, until, now time.Time) time.Duration {
	return min(ttl/2, until.Sub(now)-ttl/4)
}
