package crawler

import (
	"errors"
	"net/http"
	"time"

	"github.com/cardexhq/cardex/fetch"
)

// Schedule decides when an agent is fetched next (docs/design.md "Crawl policy").
// The zero value of each field takes its docs/configuration.md default.
type Schedule struct {
	// Interval is the re-crawl interval when the host gives no hint
	// (--crawl-interval, 1h).
	Interval time.Duration
	// MinInterval and MaxInterval clamp every delay: a Cache-Control
	// max-age, a Retry-After and the back-off (--crawl-min-interval 5m,
	// --crawl-max-interval 24h).
	MinInterval, MaxInterval time.Duration
	// Jitter is the relative spread applied to intervals and back-off so
	// agents submitted together do not stay in lockstep (default 0.1: ±10 %).
	// Negative disables it.
	Jitter float64
}

// withDefaults fills zero fields.
func (s Schedule) withDefaults() Schedule {
	if s.Interval <= 0 {
		s.Interval = time.Hour
	}
	if s.MinInterval <= 0 {
		s.MinInterval = 5 * time.Minute
	}
	if s.MaxInterval <= 0 {
		s.MaxInterval = 24 * time.Hour
	}
	if s.Jitter == 0 {
		s.Jitter = 0.1
	}
	if s.Jitter < 0 {
		s.Jitter = 0
	}
	return s
}

// Validate names the first setting that cannot work.
func (s Schedule) Validate() error {
	s = s.withDefaults()
	switch {
	case s.MinInterval > s.MaxInterval:
		return errors.New("crawler: crawl-min-interval is larger than crawl-max-interval")
	case s.Interval < s.MinInterval || s.Interval > s.MaxInterval:
		return errors.New("crawler: crawl-interval must lie between crawl-min-interval and crawl-max-interval")
	case s.Jitter >= 1:
		return errors.New("crawler: jitter must be below 1")
	}
	return nil
}

// AfterSuccess is the delay after a 200 or 304: the response's
// Cache-Control max-age when it has one (A2A §8.6 caching; a hint, clamped
// to [MinInterval, MaxInterval] so a host can neither make Cardex hammer it
// nor vanish for a year), else Interval; jittered. rnd yields [0, 1).
func (s Schedule) AfterSuccess(h http.Header, rnd func() float64) time.Duration {
	s = s.withDefaults()
	d := s.Interval
	if age, ok := fetch.MaxAge(h); ok {
		d = age
	}
	return s.clamp(s.jitter(s.clamp(d), rnd))
}

// AfterFailure is the delay after the failures-th consecutive failure
// (failures ≥ 1). A 429 or 503 with Retry-After is honoured up to
// MaxInterval and never shortened (docs/threats.md B.26): the server said
// "not before". Anything else backs off exponentially, MinInterval ×
// 2^(failures-1), capped at MaxInterval, jittered (B.25).
func (s Schedule) AfterFailure(failures int, status int, h http.Header, now time.Time, rnd func() float64) time.Duration {
	s = s.withDefaults()
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		if d, ok := fetch.RetryAfter(h, now); ok {
			return s.clamp(d)
		}
	}
	return s.clamp(s.jitter(s.backoff(failures), rnd))
}

// backoff is MinInterval × 2^(failures-1) without overflow.
func (s Schedule) backoff(failures int) time.Duration {
	d := s.MinInterval
	for i := 1; i < failures && d < s.MaxInterval; i++ {
		d *= 2
	}
	return min(d, s.MaxInterval)
}

func (s Schedule) clamp(d time.Duration) time.Duration {
	return min(max(d, s.MinInterval), s.MaxInterval)
}

// jitter spreads d uniformly over [d×(1-J), d×(1+J)).
func (s Schedule) jitter(d time.Duration, rnd func() float64) time.Duration {
	if s.Jitter == 0 || rnd == nil {
		return d
	}
	f := 1 + s.Jitter*(2*rnd()-1)
	return time.Duration(float64(d) * f)
}
