package fetch_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/fetch"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 30 ", 30 * time.Second, true},
		{"Sun, 22 Nov 2026 05:10:00 GMT", 10 * time.Minute, true},
		{"Sunday, 22-Nov-26 05:01:00 GMT", time.Minute, true}, // RFC 850
		{"Sun, 22 Nov 2026 04:00:00 GMT", 0, true},            // in the past: now
		{"99999999999999999999", 365 * 24 * time.Hour, true},  // saturates
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.value != "" {
			h.Set("Retry-After", c.value)
		}
		got, ok := fetch.RetryAfter(h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}

func TestMaxAge(t *testing.T) {
	cases := []struct {
		values []string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{[]string{"public, max-age=3600"}, time.Hour, true},
		{[]string{"MAX-AGE=60"}, time.Minute, true},
		{[]string{`max-age="300"`}, 5 * time.Minute, true},
		{[]string{"public", "max-age=86400"}, 24 * time.Hour, true},
		{[]string{"no-cache, max-age=3600"}, 0, true},
		{[]string{"no-store"}, 0, true},
		{[]string{"max-age=60, max-age=120"}, 0, true}, // conflicting: stale
		{[]string{"max-age=60, max-age=60"}, time.Minute, true},
		{[]string{"max-age=abc"}, 0, false},
		{[]string{"s-maxage=60"}, 0, false},
		{[]string{"max-age=999999999999999999999"}, 365 * 24 * time.Hour, true},
	}
	for _, c := range cases {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Cache-Control", v)
		}
		got, ok := fetch.MaxAge(h)
		if got != c.want || ok != c.ok {
			t.Errorf("MaxAge(%q) = %v, %v; want %v, %v", c.values, got, ok, c.want, c.ok)
		}
	}
}
