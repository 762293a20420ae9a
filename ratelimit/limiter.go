package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a token bucket: N events per Per, with bursts of Burst (N when
// zero). A zero N disables the limit (docs/api.md "Rate limits").
type Rate struct {
	N     int
	Per   time.Duration
	Burst int
}

// Limiter is a table of token buckets keyed by client address, domain or
// credential. The table is bounded: a flood of distinct keys (spoofed IPv6
// sources, random subdomains) evicts idle buckets, then an arbitrary eighth,
// so memory stays flat and an insert stays amortized O(1) (docs/threats.md
// I.82). A nil *Limiter allows everything.
type Limiter struct {
	limit rate.Limit
	burst int
	idle  time.Duration // a bucket idle this long is full again: forgetting it changes nothing
	max   int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// DefaultMaxKeys bounds a Limiter's table when New is given no bound.
const DefaultMaxKeys = 100_000

// New returns a limiter of r over at most maxKeys keys (DefaultMaxKeys when
// not positive), or nil for a disabled rate.
func New(r Rate, maxKeys int) *Limiter {
	if r.N <= 0 || r.Per <= 0 {
		return nil
	}
	burst := r.Burst
	if burst <= 0 {
		burst = r.N
	}
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	limit := rate.Limit(float64(r.N) / r.Per.Seconds())
	return &Limiter{
		limit:   limit,
		burst:   burst,
		idle:    time.Duration(float64(burst) / float64(limit) * float64(time.Second)),
		max:     maxKeys,
		buckets: make(map[string]*bucket),
	}
}

// Take spends one token of key's bucket. When it is empty, take spends
// nothing and says how long until a token is available.
func (l *Limiter) Take(key string, now time.Time) (ok bool, wait time.Duration) {
	return l.TakeN(key, 1, now)
}

// TakeN spends n tokens of key's bucket at once, or none: when fewer are
// left it spends nothing and says how long until there are. n above the
// burst costs the burst (a full bucket always admits one request); n ≤ 0
// costs nothing.
func (l *Limiter) TakeN(key string, n int, now time.Time) (ok bool, wait time.Duration) {
	if l == nil || n <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, now)
	r := b.lim.ReserveN(now, min(n, l.burst))
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Empty tells, without spending, whether key's bucket has no token left.
func (l *Limiter) Empty(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return false, 0
	}
	if tokens := b.lim.TokensAt(now); tokens < 1 {
		return true, time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second))
	}
	return false, 0
}

func (l *Limiter) bucket(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.max {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	return b
}

// evict drops every idle bucket; if none is idle (a flood of live keys), it
// drops an arbitrary eighth so inserting stays amortized O(1).
func (l *Limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.seen) >= l.idle {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.max {
		return
	}
	n := max(1, l.max/8)
	for k := range l.buckets {
		if n == 0 {
			break
		}
		delete(l.buckets, k)
		n--
	}
}

// Size is the number of keys the table holds.
func (l *Limiter) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// RetryAfter rounds a wait up to whole seconds, at least one (RFC 9110
// §10.2.3 delay-seconds), for a Retry-After header.
func RetryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// available is how many whole tokens key's bucket holds (math.MaxInt32 on
// a nil Limiter) and how long until one more is there. l.mu is held.
func (l *Limiter) available(key string, now time.Time) (int, time.Duration) {
	if l == nil {
		return math.MaxInt32, 0
	}
	tokens := float64(l.burst)
	if b, ok := l.buckets[key]; ok {
		tokens = b.lim.TokensAt(now)
	}
	n := max(0, int(math.Floor(tokens)))
	return n, time.Duration((float64(n) + 1 - tokens) / float64(l.limit) * float64(time.Second))
}

// spend takes n tokens of key's bucket, which holds them. l.mu is held.
func (l *Limiter) spend(key string, n int, now time.Time) {
	if l == nil {
		return
	}
	l.bucket(key, now).lim.ReserveN(now, n)
}
