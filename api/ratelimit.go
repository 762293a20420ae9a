package api

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a token bucket: N events per Per, with bursts of Burst (N when
// zero). A zero N disables the limit (CONTRACT.md §5 "0 disables a limit").
type Rate struct {
	N     int
	Per   time.Duration
	Burst int
}

// Limits are the API's rate limits (CONTRACT.md §5, RELIABILITY.md A.8,
// I.78, I.82). Requests with a valid token are never limited.
type Limits struct {
	SubmitPerAddress Rate // anonymous submissions per client address
	SubmitPerDomain  Rate // anonymous submissions per registrable domain of the submitted host
	ReadPerAddress   Rate // anonymous reads per client address
	AuthFailures     Rate // failed authentications per client address before 429
}

// DefaultLimits are the defaults of CONTRACT.md §5; AuthFailures allows a
// mistyped token or two but not a guessing run.
func DefaultLimits() Limits {
	return Limits{
		SubmitPerAddress: Rate{N: 10, Per: time.Minute},
		SubmitPerDomain:  Rate{N: 100, Per: time.Hour},
		ReadPerAddress:   Rate{N: 50, Per: time.Second, Burst: 100},
		AuthFailures:     Rate{N: 10, Per: time.Minute},
	}
}

// limiter is a table of token buckets keyed by client address or domain.
// The table is bounded: a flood of distinct keys (spoofed IPv6 sources,
// random subdomains) evicts idle buckets, then arbitrary ones, so memory
// stays flat (RELIABILITY.md I.82).
type limiter struct {
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

// newLimiter returns nil for a disabled rate; a nil *limiter allows all.
func newLimiter(r Rate, maxKeys int) *limiter {
	if r.N <= 0 || r.Per <= 0 {
		return nil
	}
	burst := r.Burst
	if burst <= 0 {
		burst = r.N
	}
	limit := rate.Limit(float64(r.N) / r.Per.Seconds())
	return &limiter{
		limit:   limit,
		burst:   burst,
		idle:    time.Duration(float64(burst) / float64(limit) * float64(time.Second)),
		max:     maxKeys,
		buckets: make(map[string]*bucket),
	}
}

// take spends one token of key's bucket. When it is empty, take spends
// nothing and says how long until a token is available.
func (l *limiter) take(key string, now time.Time) (ok bool, wait time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, now)
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// empty tells, without spending, whether key's bucket has no token left.
func (l *limiter) empty(key string, now time.Time) (bool, time.Duration) {
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

func (l *limiter) bucket(key string, now time.Time) *bucket {
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
func (l *limiter) evict(now time.Time) {
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

func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// retryAfter rounds a wait up to whole seconds, at least one (RFC 9110
// §10.2.3 delay-seconds).
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

func rateLimited(wait time.Duration, detail string) *problem {
	p := newProblem("rate-limited", detail)
	p.retryAfter = retryAfter(wait)
	return p
}
