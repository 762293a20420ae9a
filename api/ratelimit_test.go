package api

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func TestLimiterBurstThenRetryAfter(t *testing.T) {
	l := newLimiter(Rate{N: 10, Per: time.Minute}, 100)
	for i := range 10 {
		if ok, _ := l.take("a", t0); !ok {
			t.Fatalf("request %d refused inside the burst", i)
		}
	}
	ok, wait := l.take("a", t0)
	if ok || wait != 6*time.Second || retryAfter(wait) != 6 {
		t.Fatalf("11th: ok=%v wait=%v", ok, wait)
	}
	// A refused request spends nothing: after exactly one interval there is
	// exactly one token.
	if ok, _ := l.take("a", t0.Add(6*time.Second)); !ok {
		t.Fatal("token not back after 6s")
	}
	if ok, _ := l.take("a", t0.Add(6*time.Second)); ok {
		t.Fatal("second token after 6s")
	}
	if ok, _ := l.take("b", t0); !ok {
		t.Fatal("another key shares the bucket")
	}
}

func TestLimiterDisabled(t *testing.T) {
	l := newLimiter(Rate{}, 10)
	if l != nil {
		t.Fatal("zero rate built a limiter")
	}
	for range 1000 {
		if ok, _ := l.take("a", t0); !ok {
			t.Fatal("nil limiter refused")
		}
	}
	if blocked, _ := l.empty("a", t0); blocked {
		t.Fatal("nil limiter blocked")
	}
}

// RELIABILITY.md I.82: a flood of distinct client keys does not grow the
// table without bound, and live (limited) buckets survive while idle ones
// exist.
func TestLimiterTableIsBounded(t *testing.T) {
	l := newLimiter(Rate{N: 1, Per: time.Second, Burst: 1}, 64)
	for i := range 10_000 {
		l.take(fmt.Sprintf("k%d", i), t0.Add(time.Duration(i)*time.Millisecond))
		if n := l.size(); n > 64 {
			t.Fatalf("table grew to %d entries", n)
		}
	}
	// Idle buckets (refilled) are evicted before live ones: the still-empty
	// bucket of a client that keeps hammering is not reset by the flood.
	l2 := newLimiter(Rate{N: 1, Per: time.Hour, Burst: 1}, 4)
	l2.take("hammer", t0)
	for i := range 3 {
		l2.take(fmt.Sprintf("idle%d", i), t0.Add(-2*time.Hour))
	}
	l2.take("new", t0)
	if ok, _ := l2.take("hammer", t0); ok {
		t.Fatal("eviction reset a live, empty bucket while idle ones existed")
	}
}

func TestLimiterEmptyDoesNotSpend(t *testing.T) {
	l := newLimiter(Rate{N: 2, Per: time.Minute}, 10)
	if blocked, _ := l.empty("a", t0); blocked {
		t.Fatal("unknown key blocked")
	}
	l.take("a", t0)
	l.take("a", t0)
	blocked, wait := l.empty("a", t0)
	if !blocked || wait != 30*time.Second {
		t.Fatalf("blocked=%v wait=%v", blocked, wait)
	}
	if blocked, _ := l.empty("a", t0.Add(30*time.Second)); blocked {
		t.Fatal("still blocked after refill")
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		if got := retryAfter(d); got != want {
			t.Errorf("retryAfter(%v) = %d, want %d", d, got, want)
		}
	}
}

// RELIABILITY.md A.8: submissions are also counted per registrable domain.
func TestRegistrableDomain(t *testing.T) {
	for in, want := range map[string]string{
		"https://agent-1.example.com/":                        "example.com",
		"https://A.B.Example.COM/.well-known/agent-card.json": "example.com",
		"victim.co.uk":                 "victim.co.uk",
		"https://x.y.victim.co.uk:443": "victim.co.uk",
		"https://bücher.de/":           "xn--bcher-kva.de",
		"https://127.0.0.1/":           "127.0.0.1",
		"https://[::1]:8443/":          "::1",
		"https://co.uk/":               "co.uk",
	} {
		if got := registrableDomain(in); got != want {
			t.Errorf("registrableDomain(%q) = %q, want %q", in, got, want)
		}
	}
}
