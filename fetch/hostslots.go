package fetch

import (
	"context"
	"errors"
	"sync"

	"github.com/cardexhq/cardex/cardurl"
)

// HostUse says what a request to a host is for: crawls and claim checks
// may take every slot of a host, probes only their share, so they never
// hold up a host's card fetches (docs/security.md "Per-host politeness",
// docs/threats.md K.98).
type HostUse int

const (
	// UseCrawl is a card or key-set fetch of the crawler.
	UseCrawl HostUse = iota
	// UseProbe is a liveness probe of an agent's interface (docs/liveness.md).
	UseProbe
	// UseClaim is a host-claim verification fetch (docs/claims.md). It
	// waits for a slot as a crawl does: claims are few (their own queue
	// caps them per host) and a host's owner must never be refused one
	// because probes are waiting (docs/threats.md K.101).
	UseClaim
)

// ErrHostBusy is Acquire's answer to a probe when the host's share is
// taken and as many others already wait for it: the caller skips the host
// rather than hold a worker (docs/threats.md K.98).
var ErrHostBusy = errors.New("crawler: the host's share of in-flight requests is taken")

// HostSlots is the per-host politeness budget of one process: at most
// limit requests in flight per host, whatever they are for, counted on the
// host's canonical spelling (cardurl.HostKey: 127.0.0.4, [::ffff:127.0.0.4]
// and 2130706436 are one host, docs/threats.md K.100). The server builds
// one (of --crawl-per-host slots) and hands it to the crawler, the
// liveness prober and claim verification, so together they never hold more
// requests to one host than the cap (docs/security.md "Per-host
// politeness").
//
// Crawls (UseCrawl) and claim fetches (UseClaim) may take every slot.
// Probes take at most Share() of them, so a slow host's probes never hold
// its crawls back, and when their share is taken at most Share() more
// wait: further ones fail at once with ErrHostBusy, so one host never holds
// more than 2 × Share() of the prober's workers.
//
// Use it around each request:
//
//	release, err := hosts.Acquire(ctx, rawURLOrHost, fetch.UseClaim)
//	if err != nil {
//		return err // ctx ended while waiting, or ErrHostBusy
//	}
//	defer release()
type HostSlots struct {
	limit, share int
	mu           sync.Mutex
	hosts        map[string]*hostLoad
}

// hostLoad is one host's requests in flight and waiters. free is closed
// (and replaced) whenever a slot is given back, waking every waiter to
// look again.
type hostLoad struct {
	all, background int // in flight: every use, and probes
	waiters         int // calls inside Acquire for this host
	bgWaiting       int // probes waiting for their share
	free            chan struct{}
}

// NewHostSlots allows limit requests in flight per host (≤ 0 means 2).
func NewHostSlots(limit int) *HostSlots {
	if limit <= 0 {
		limit = 2
	}
	return &HostSlots{limit: limit, share: max(1, limit/2), hosts: map[string]*hostLoad{}}
}

// Limit is the cap of requests in flight per host.
func (h *HostSlots) Limit() int { return h.limit }

// Share is how many of a host's slots probes may hold: half the limit, at
// least one.
func (h *HostSlots) Share() int { return h.share }

// Acquire waits for a slot of host (a host or a URL, any spelling) for
// use, and returns the function that gives it back. It fails with ctx's
// error when ctx ends first, and at once with ErrHostBusy for a probe that
// would wait behind Share() others.
func (h *HostSlots) Acquire(ctx context.Context, host string, use HostUse) (release func(), err error) {
	key := cardurl.HostKey(host)
	bg := use == UseProbe
	h.mu.Lock()
	l := h.hosts[key]
	if l == nil {
		l = &hostLoad{free: make(chan struct{})}
		h.hosts[key] = l
	}
	l.waiters++ // keeps l in the map while this call holds it
	counted := false
	for !h.fits(l, bg) {
		if bg && !counted {
			if l.bgWaiting >= h.share {
				l.waiters--
				h.drop(key, l)
				h.mu.Unlock()
				return nil, ErrHostBusy
			}
			l.bgWaiting++
			counted = true
		}
		free := l.free
		h.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			h.mu.Lock()
			if counted {
				l.bgWaiting--
			}
			l.waiters--
			h.drop(key, l)
			h.mu.Unlock()
			return nil, ctx.Err()
		}
		h.mu.Lock()
	}
	if counted {
		l.bgWaiting--
	}
	l.waiters--
	l.all++
	if bg {
		l.background++
	}
	h.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { h.release(key, l, bg) }) }, nil
}

// fits reports whether one more request of the kind fits the host's load.
func (h *HostSlots) fits(l *hostLoad, bg bool) bool {
	return l.all < h.limit && (!bg || l.background < h.share)
}

func (h *HostSlots) release(key string, l *hostLoad, bg bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l.all--
	if bg {
		l.background--
	}
	close(l.free)
	l.free = make(chan struct{})
	h.drop(key, l)
}

// drop forgets a host nobody holds or waits for, so the map holds only
// hosts in use.
func (h *HostSlots) drop(key string, l *hostLoad) {
	if l.all == 0 && l.waiters == 0 {
		delete(h.hosts, key)
	}
}

// InFlight is the number of requests to host (any spelling) in flight now.
func (h *HostSlots) InFlight(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.hosts[cardurl.HostKey(host)]; l != nil {
		return l.all
	}
	return 0
}
