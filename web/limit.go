package web

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/cardexhq/cardex/api/clientaddr"
)

// limiter is a bounded table of token buckets keyed by client address.
// When the table is full, idle buckets go first, then arbitrary ones, so a
// flood of distinct addresses cannot grow memory (RELIABILITY.md I.82).
type limiter struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	b     map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

const maxBuckets = 10_000

// newLimiter returns nil (allow everything) for a disabled rate.
func newLimiter(r Rate) *limiter {
	if r.N <= 0 || r.Per <= 0 {
		return nil
	}
	return &limiter{limit: rate.Limit(float64(r.N) / r.Per.Seconds()), burst: r.N, b: map[string]*bucket{}}
}

// allow spends one token of key's bucket.
func (l *limiter) allow(key string, now time.Time) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	bk, ok := l.b[key]
	if !ok {
		if len(l.b) >= maxBuckets {
			l.evict(now)
		}
		bk = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.b[key] = bk
	}
	bk.seen = now
	return bk.lim.AllowN(now, 1)
}

// exhausted reports, without spending, whether key's bucket is empty.
func (l *limiter) exhausted(key string, now time.Time) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	bk, ok := l.b[key]
	return ok && bk.lim.TokensAt(now) < 1
}

func (l *limiter) evict(now time.Time) {
	full := time.Duration(float64(l.burst) / float64(l.limit) * float64(time.Second))
	for k, bk := range l.b {
		if now.Sub(bk.seen) > full {
			delete(l.b, k)
		}
	}
	for k := range l.b {
		if len(l.b) < maxBuckets {
			return
		}
		delete(l.b, k)
	}
}

// clientKey is the rate-limit key of r's client, the same the API uses
// (the TCP peer, or the right-most untrusted X-Forwarded-For hop behind a
// trusted proxy; IPv6 grouped by /64).
func (u *ui) clientKey(r *http.Request) string {
	return clientaddr.Key(clientaddr.Addr(r, u.cfg.TrustedProxies))
}
