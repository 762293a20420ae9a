// Package pace serves interactive requests ahead of background work. An
// HTTP middleware counts the requests people and agents wait for
// (searches, pages, reads; and, for the indexer, writes such as
// submissions); background loops — the search indexer, the crawler's and
// the prober's recording — ask the Gate before each unit of work. While no interactive request is in flight (and none for a short
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
//
// Two kinds of foreground work are tracked: interactive requests (reads
// and queries, Begin) and writes people wait for (submissions, approvals,
// BeginWrite). The crawler's and the prober's writes yield to interactive
// requests only (Background): they are what keeps a submission moving.
// The search indexer yields to both (Index): the index is derived data
// that catches up once the import is done.
type Gate struct {
	share float64
	quiet time.Duration
	burst time.Duration
	max   time.Duration
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	reads, writes activity
	records       lane // the crawler's and the prober's writes
	index         lane // the search indexer

	waited  atomic.Int64 // nanoseconds background units waited, in all
	charged atomic.Int64 // nanoseconds charged to background units while busy
}

// activity is one kind of foreground work.
type activity struct {
	inFlight atomic.Int64
	lastEnd  atomic.Int64 // unix nanoseconds the last one ended
}

func (a *activity) begin(now func() time.Time) (end func()) {
	a.inFlight.Add(1)
	return func() {
		a.lastEnd.Store(now().UnixNano())
		a.inFlight.Add(-1)
	}
}

func (a *activity) busyAt(now time.Time, quiet time.Duration) bool {
	return a.inFlight.Load() > 0 || now.UnixNano()-a.lastEnd.Load() < int64(quiet)
}

// lane is one budget of background time, spent while busy says so.
type lane struct {
	g    *Gate
	busy func(now time.Time) bool

	mu     sync.Mutex
	credit time.Duration // background time available now; negative: owed
	at     time.Time     // when credit was last brought up to date
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
	g := &Gate{share: o.Share, quiet: o.Quiet, burst: o.Burst, max: o.MaxWait, now: o.Now, sleep: o.Sleep}
	g.records = lane{g: g, busy: g.busyAt, credit: o.Burst, at: o.Now()}
	g.index = lane{g: g, busy: func(now time.Time) bool { return g.busyAt(now) || g.writes.busyAt(now, g.quiet) },
		credit: o.Burst, at: o.Now()}
	return g
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
	return g.reads.begin(g.now)
}

// BeginWrite marks a write someone waits for (a submission, an approval)
// in flight; the returned func marks it done. Safe on a nil gate.
func (g *Gate) BeginWrite() (end func()) {
	if g == nil {
		return func() {}
	}
	return g.writes.begin(g.now)
}

// Busy reports whether interactive requests are in flight or ended less
// than the quiet period ago.
func (g *Gate) Busy() bool {
	if g == nil {
		return false
	}
	return g.busyAt(g.now())
}

func (g *Gate) busyAt(now time.Time) bool { return g.reads.busyAt(now, g.quiet) }

// Background waits until one unit of the crawler's or the prober's work
// may run (it yields to interactive requests), or for MaxWait at most, and
// returns the func to call when it is done, which charges the unit its
// wall-clock time if the gate was busy meanwhile. It returns ctx's error if
// ctx ends first. Safe on a nil gate.
func (g *Gate) Background(ctx context.Context) (done func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	return g.records.background(ctx)
}

// Indexer is the gate as the search indexer sees it: Background yields
// to interactive requests and to writes; Busy is Gate.Busy (queries are
// running, so their segments are worth decoding now).
type Indexer struct{ g *Gate }

// Index returns the indexer's view of the gate. Safe on a nil gate.
func (g *Gate) Index() Indexer { return Indexer{g} }

// Background waits for the indexer's turn, as Gate.Background does for the
// crawler's and the prober's.
func (x Indexer) Background(ctx context.Context) (done func(), err error) {
	if x.g == nil {
		return func() {}, nil
	}
	return x.g.index.background(ctx)
}

// Busy reports whether interactive requests are being served.
func (x Indexer) Busy() bool { return x.g.Busy() }

// Yielding reports whether the indexer's work waits its turn now:
// interactive requests or writes are being served.
func (x Indexer) Yielding() bool {
	if x.g == nil {
		return false
	}
	return x.g.index.busy(x.g.now())
}

func (l *lane) background(ctx context.Context) (done func(), err error) {
	g := l.g
	start := g.now()
	for {
		now := g.now()
		wait := min(l.owed(now), g.max-now.Sub(start))
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
		if !l.busy(end) && !l.busy(began) {
			return
		}
		d := end.Sub(began)
		g.charged.Add(int64(d))
		l.mu.Lock()
		l.update(end)
		l.credit -= d
		l.mu.Unlock()
	}, nil
}

// owed brings the credit up to date and returns how long background work
// must wait for it to reach zero (≤ 0: it may run now). A quiet lane
// forgives every debt.
func (l *lane) owed(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.busy(now) {
		l.credit, l.at = l.g.burst, now
		return 0
	}
	l.update(now)
	if l.credit >= 0 {
		return 0
	}
	return time.Duration(float64(-l.credit) / l.g.share)
}

// update earns credit for the time since the last update (l.mu held).
func (l *lane) update(now time.Time) {
	if d := now.Sub(l.at); d > 0 {
		l.credit = min(l.g.burst, l.credit+time.Duration(float64(d)*l.g.share))
		l.at = now
	}
}

// Stats are the gate's totals since it was made (for metrics).
type Stats struct {
	InFlight int64         // interactive requests in flight now
	Writes   int64         // writes in flight now
	Waited   time.Duration // background units' time spent waiting for the gate
	Charged  time.Duration // background units' time charged while foreground work ran
}

// Stats reads the totals. Safe on a nil gate (zero).
func (g *Gate) Stats() Stats {
	if g == nil {
		return Stats{}
	}
	return Stats{InFlight: g.reads.inFlight.Load(), Writes: g.writes.inFlight.Load(),
		Waited: time.Duration(g.waited.Load()), Charged: time.Duration(g.charged.Load())}
}

// Interactive wraps h so that every request it serves counts as
// interactive while it runs.
func (g *Gate) Interactive(h http.Handler) http.Handler {
	if g == nil {
		return h
	}
	return during(g.Begin, h)
}

// Writes wraps h so that every request it serves counts as a write while
// it runs.
func (g *Gate) Writes(h http.Handler) http.Handler {
	if g == nil {
		return h
	}
	return during(g.BeginWrite, h)
}

// during wraps h so that begin is called as each request starts and what
// it returns as the request ends.
func during(begin func() (end func()), h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		end := begin()
		defer end()
		h.ServeHTTP(w, r)
	})
}
