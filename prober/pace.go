package prober

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// Pacing (docs/liveness.md "Pacing"): the prober starts at most Rate
// agents' rounds a second, Rate = max(RateFloor, N / (paceShare ×
// Interval)) with N the approved agents counted every CountEvery. A bulk
// approval of 100k agents makes all of them due at once; unpaced, the
// prober probed them as fast as its workers and the per-host caps allowed,
// taking the cores the queries need, and each first result is a liveness
// change the search indexer applies. Paced, the first round of a large
// import is spread over about paceShare × Interval, and every later round
// too (each agent's next probe is an interval after its last).
const (
	// paceShare is the part of the interval one round of every agent may
	// take: the rest is room for agents approved meanwhile, rounds the
	// per-host caps held back, and the jitter.
	paceShare = 0.8
	// DefaultRateFloor is the least rate (--probe-rate-floor): a small
	// catalogue is probed at once, a newly approved agent in an idle
	// registry within a second.
	DefaultRateFloor = 20
	// claimsPerSecond is how often, at most, a paced prober claims when
	// tokens come back: the steps of a fast pace are a tenth of its
	// second, never more than the workers.
	claimsPerSecond = 10
)

// pacer is a token bucket of round starts: one token per agent claimed,
// refilled at the rate, holding at most one second's worth (burst), so the
// rounds are spread evenly over each second. It runs on the process's
// clock, not Config.Now (the schedule's), and kicks the runner when tokens
// come back, so a claim the bucket cut short waits a step, not a tick.
type pacer struct {
	floor      float64
	per        time.Duration // paceShare × Interval
	countEvery time.Duration
	maxStep    int
	kick       func()

	mu      sync.Mutex
	rate    float64 // tokens per second
	tokens  float64
	last    time.Time // when tokens were last added
	tried   time.Time // when the agents were last counted or the count failed (zero: never)
	counted time.Time // when the last count succeeded
	counts  registry.ProbeCounts
	timer   *time.Timer // a kick for when tokens come back; nil: none pending
	stopped bool
}

func newPacer(floor float64, interval, countEvery time.Duration, maxStep int, kick func()) *pacer {
	return &pacer{floor: floor, per: time.Duration(paceShare * float64(interval)), countEvery: countEvery,
		maxStep: max(maxStep, 1), kick: kick, rate: floor, tokens: floor, last: time.Now()}
}

// rateFor is the pace for n probeable agents.
func (pc *pacer) rateFor(n int64) float64 {
	return max(pc.floor, float64(n)/pc.per.Seconds())
}

// burst is one second's worth of tokens, at least one.
func (pc *pacer) burst() float64 { return max(pc.rate, 1) }

// refresh counts the probeable agents when CountEvery has passed since the
// last count (or there was none) and sets the rate from them. A failed
// count keeps the rate and is tried again after CountEvery.
func (pc *pacer) refresh(ctx context.Context, reg Registry, now time.Time, log func(error)) {
	pc.mu.Lock()
	due := pc.tried.IsZero() || time.Since(pc.tried) >= pc.countEvery
	if due {
		pc.tried = time.Now()
	}
	pc.mu.Unlock()
	if !due {
		return
	}
	c, err := reg.CountProbes(ctx, now)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			log(err)
		}
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.fill(time.Now())
	pc.counts, pc.counted, pc.rate = c, time.Now(), pc.rateFor(c.Probeable)
	pc.tokens = min(pc.tokens, pc.burst())
}

// fill adds the tokens earned since the last fill; pc.mu is held.
func (pc *pacer) fill(now time.Time) {
	if d := now.Sub(pc.last); d > 0 {
		pc.tokens = min(pc.burst(), pc.tokens+pc.rate*d.Seconds())
	}
	pc.last = now
}

// take takes up to want whole tokens and returns how many it took. When
// that is fewer than want, a kick is set for when the next step of tokens
// is back.
func (pc *pacer) take(want int) int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.fill(time.Now())
	n := min(want, int(math.Floor(pc.tokens)))
	pc.tokens -= float64(n)
	if n < want {
		pc.wakeLocked(min(want, pc.step()))
	}
	return n
}

// giveBack returns tokens a claim did not use (fewer agents were due).
func (pc *pacer) giveBack(n int) {
	if n <= 0 {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.tokens = min(pc.burst(), pc.tokens+float64(n))
}

// step is how many tokens a claim cut short waits for: a tenth of a
// second's worth, at least one and at most maxStep (the runner's minimum
// claim).
func (pc *pacer) step() int {
	return min(max(int(math.Ceil(pc.rate/claimsPerSecond)), 1), pc.maxStep)
}

// wakeLocked sets a kick for when n tokens are there, unless one is
// pending; pc.mu is held.
func (pc *pacer) wakeLocked(n int) {
	if pc.timer != nil || pc.stopped {
		return
	}
	wait := time.Duration((float64(n) - pc.tokens) / pc.rate * float64(time.Second))
	pc.timer = time.AfterFunc(max(wait, time.Millisecond), func() {
		pc.mu.Lock()
		pc.timer = nil
		pc.mu.Unlock()
		pc.kick()
	})
}

// stop cancels a pending kick (Shutdown).
func (pc *pacer) stop() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.stopped = true
	if pc.timer != nil {
		pc.timer.Stop()
		pc.timer = nil
	}
}

// Pace is the prober's pacing: its rate and the last count it came from.
type Pace struct {
	// Rate is the most agents' rounds started per second.
	Rate float64
	// Counts are the probe schedule's sizes at CountedAt (zero before the
	// first count).
	Counts    registry.ProbeCounts
	CountedAt time.Time
}

// Pace returns the prober's current pace.
func (p *Prober) Pace() Pace {
	pc := p.pace
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return Pace{Rate: pc.rate, Counts: pc.counts, CountedAt: pc.counted}
}
