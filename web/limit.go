package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
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

// clientKey is the rate-limit key of r: the TCP peer, or the right-most
// X-Forwarded-For hop that is not a trusted proxy when the peer is one.
// IPv6 clients are grouped by /64, the block one subscriber usually holds.
func (u *ui) clientKey(r *http.Request) string {
	a := peer(r.RemoteAddr)
	if a.IsValid() && u.trusted(a) {
		hops := r.Header.Values("X-Forwarded-For")
	outer:
		for i := len(hops) - 1; i >= 0; i-- {
			parts := strings.Split(hops[i], ",")
			for j := len(parts) - 1; j >= 0; j-- {
				h, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
				if err != nil {
					break outer
				}
				if h = h.Unmap(); !u.trusted(h) {
					a = h
					break outer
				}
			}
		}
	}
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is6():
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func (u *ui) trusted(a netip.Addr) bool {
	for _, p := range u.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peer(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}
