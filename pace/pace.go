// Package pace serves interactive requests ahead of background work. An
// HTTP middleware counts the requests people and agents wait for
// (searches, pages, reads); background loops — the search indexer, the
// crawler's and the prober's recording — ask the Gate before each unit of
// work. While no interactive request is in flight (and none for a short
// quiet period) background work runs unhindered. While there are, it may
// use only a share of wall-clock time: each unit is charged the time it
// took, and the next one waits until the share has paid for it. A unit
// that took long under contention is charged more, so the slower the
// machine answers queries, the less background work competes with them.
//
// The package imports nothing of Cardex (docs/design.md "The tree").
package pace

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a Gate's settings.
const (
	// DefaultShare of wall-clock time background work may use while
	// interactive requests are in flight: a quarter of one core's time.
	DefaultShare = 0.25
	// DefaultQuiet is how long after the last interactive request the
	// gate still counts as busy: a client sending requests one after
	// another leaves gaps of a fraction of a millisecond between them.
	DefaultQuiet = 50 * time.Millisecond
	// DefaultBurst is the credit background work may build up while
	// queries run: one unit of this length runs without waiting.
	DefaultBurst = 50 * time.Millisecond
	// DefaultMaxWait bounds how long one unit waits, however busy the
	// gate: background work always moves (a lease it holds must not run
	// out while it waits, and the index must catch up eventually).
	DefaultMaxWait = time.Second
	// pollEvery bounds one wait: a gate that turns quiet releases waiting
	// work within it.
	pollEvery = 10 * time.Millisecond
)

// Gate decides when background work runs. The zero value is not usable;
// use New. A nil *Gate lets every unit run at once (Background returns
// immediately), so components built without one behave as before.
type Gate struct {
	share float64
	quiet time.Duration
	burst time.Duration
	max   time.Duration
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	inFlight atomic.Int64
	lastEnd  atomic.Int64 // unix nanoseconds the last interactive request ended

	mu     sync.Mutex
	credit time.Duration // background time available now; negative: owed
	at     time.Time     // when credit was last brought up to date

	waited  atomic.Int64 // nanoseconds background units waited, in all
	charged atomic.Int64 // nanoseconds charged to background units while busy
}

// Options configure a Gate; zero values take the defaults.
type Options struct {
	Share float64       // (0, 1]; DefaultShare
	Quiet time.Duration // DefaultQuiet
	Burst time.Duration // DefaultBurst
	// MaxWait bounds one unit's wait; DefaultMaxWait.
	MaxWait time.Duration
	// Now and Sleep are the clock (tests); default time.Now and a timer.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// New returns a gate with o's settings.
func New(o Options) *Gate {
	if o.Share <= 0 || o.Share > 1 {
		o.Share = DefaultShare
	}
	if o.Quiet <= 0 {
		o.Quiet = DefaultQuiet
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return &Gate{share: o.Share, quiet: o.Quiet, burst: o.Burst, max: o.MaxWait, now: o.Now, sleep: o.Sleep, credit: o.Burst, at: o.Now()}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Begin marks an interactive request in flight; the returned func marks
// it done. Safe on a nil gate.
func (g *Gate) Begin() (end func()) {
	if g == nil {
		return func() {}
	}
	g.inFlight.Add(1)
	return func() {
		g.lastEnd.Store(g.now().UnixNano())
		g.inFlight.Add(-1)
	}
}

// Busy reports whether interactive requests are in flight or ended less
// than the quiet period ago.
func (g *Gate) Busy() bool {
	if g == nil {
		return false
	}
	return g.busyAt(g.now())
}

func (g *Gate) busyAt(now time.Time) bool {
	return g.inFlight.Load() > 0 || now.UnixNano()-g.lastEnd.Load() < int64(g.quiet)
}

// Background waits until one unit of background work may run, or for
// MaxWait at most, and returns the func to call when it is done, which
// charges the unit its wall-clock time if the gate was busy meanwhile. It
// returns ctx's error if ctx ends first. Safe on a nil gate.
func (g *Gate) Background(ctx context.Context) (done func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	start := g.now()
	for {
		now := g.now()
		wait := min(g.owed(now), g.max-now.Sub(start))
		if wait <= 0 {
			break
		}
		if err := g.sleep(ctx, min(wait, pollEvery)); err != nil {
			g.waited.Add(int64(g.now().Sub(start)))
			return nil, err
		}
	}
	began := g.now()
	g.waited.Add(int64(began.Sub(start)))
	return func() {
		end := g.now()
		if !g.busyAt(end) && !g.busyAt(began) {
			return
		}
		d := end.Sub(began)
		g.charged.Add(int64(d))
		g.mu.Lock()
		g.update(end)
		g.credit -= d
		g.mu.Unlock()
	}, nil
}

// owed brings the credit up to date and returns how long background work
// must wait for it to reach zero (≤ 0: it may run now). A quiet gate
// forgives every debt.
func (g *Gate) owed(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.busyAt(now) {
		g.credit, g.at = g.burst, now
		return 0
	}
	g.update(now)
	if g.credit >= 0 {
		return 0
	}
	return time.Duration(float64(-g.credit) / g.share)
}

// update earns credit for the time since the last update (g.mu held).
func (g *Gate) update(now time.Time) {
	if d := now.Sub(g.at); d > 0 {
		g.credit = min(g.burst, g.credit+time.Duration(float64(d)*g.share))
		g.at = now
	}
}

// Stats are the gate's totals since it was made (for metrics).
type Stats struct {
	InFlight int64         // interactive requests in flight now
	Waited   time.Duration // background units' time spent waiting for the gate
	Charged  time.Duration // background units' time charged while interactive requests ran
}

// Stats reads the totals. Safe on a nil gate (zero).
func (g *Gate) Stats() Stats {
	if g == nil {
		return Stats{}
	}
	return Stats{InFlight: g.inFlight.Load(), Waited: time.Duration(g.waited.Load()), Charged: time.Duration(g.charged.Load())}
}

// Interactive wraps h so that every request it serves counts as
// interactive while it runs.
func (g *Gate) Interactive(h http.Handler) http.Handler {
	if g == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		end := g.Begin()
		defer end()
		h.ServeHTTP(w, r)
	})
}
