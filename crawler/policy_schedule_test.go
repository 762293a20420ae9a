package crawler_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/crawler"
)

func fixedRand(v float64) func() float64 { return func() float64 { return v } }

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// docs/design.md "Crawl policy": max-age is a hint clamped to [5m, 24h], the
// default interval is 1h, all with ±10 % jitter.
func TestScheduleAfterSuccess(t *testing.T) {
	var s crawler.Schedule
	mid := fixedRand(0.5) // no jitter
	cases := []struct {
		name string
		h    http.Header
		rnd  func() float64
		want time.Duration
	}{
		{"no hint", header(), mid, time.Hour},
		{"max-age 2h", header("Cache-Control", "public, max-age=7200"), mid, 2 * time.Hour},
		{"max-age 10s clamped up", header("Cache-Control", "max-age=10"), mid, 5 * time.Minute},
		{"no-store revalidates at the minimum", header("Cache-Control", "no-store"), mid, 5 * time.Minute},
		{"max-age a year clamped down", header("Cache-Control", "max-age=31536000"), mid, 24 * time.Hour},
		{"jitter low end", header(), fixedRand(0), 54 * time.Minute},
		{"jitter upper half", header(), fixedRand(0.75), 63 * time.Minute},
		{"jitter never leaves the clamp", header("Cache-Control", "max-age=86400"), fixedRand(0.999999), 24 * time.Hour},
	}
	for _, c := range cases {
		if got := s.AfterSuccess(c.h, c.rnd); got.Round(time.Millisecond) != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// docs/threats.md B.25, B.26: failures back off exponentially from 5 min up
// to 24 h; 429/503 Retry-After is honoured up to 24 h and never shortened
// by jitter.
func TestScheduleAfterFailure(t *testing.T) {
	var s crawler.Schedule
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	mid := fixedRand(0.5)
	for n, want := range map[int]time.Duration{
		1: 5 * time.Minute, 2: 10 * time.Minute, 3: 20 * time.Minute, 4: 40 * time.Minute,
		8: 640 * time.Minute, 9: 1280 * time.Minute, 10: 24 * time.Hour, 1000: 24 * time.Hour,
	} {
		if got := s.AfterFailure(n, 500, header("Retry-After", "60"), now, mid); got != want {
			t.Errorf("failure %d (500, Retry-After ignored): %v, want %v", n, got, want)
		}
	}
	if got := s.AfterFailure(2, 0, nil, now, fixedRand(0)); got != 9*time.Minute {
		t.Errorf("jittered back-off: %v, want 9m", got)
	}
	cases := []struct {
		name   string
		status int
		h      http.Header
		want   time.Duration
	}{
		{"429 seconds", 429, header("Retry-After", "7200"), 2 * time.Hour},
		{"503 date", 503, header("Retry-After", now.Add(3*time.Hour).Format(http.TimeFormat)), 3 * time.Hour},
		{"429 a week, capped", 429, header("Retry-After", "604800"), 24 * time.Hour},
		{"429 one second, raised to the minimum", 429, header("Retry-After", "1"), 5 * time.Minute},
		{"429 without Retry-After backs off", 429, header(), 20 * time.Minute},
		{"429 malformed Retry-After backs off", 429, header("Retry-After", "soon"), 20 * time.Minute},
	}
	for _, c := range cases {
		if got := s.AfterFailure(3, c.status, c.h, now, fixedRand(0)); c.status != 0 && c.want != 20*time.Minute && got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := s.AfterFailure(3, c.status, c.h, now, mid); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestScheduleValidate(t *testing.T) {
	bad := []crawler.Schedule{
		{MinInterval: time.Hour, MaxInterval: time.Minute},
		{Interval: time.Minute},
		{Interval: 48 * time.Hour},
		{Jitter: 1},
	}
	for _, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v: Validate accepted it", s)
		}
	}
	if err := (crawler.Schedule{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
