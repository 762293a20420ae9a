package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func TestLimiterBurstThenRetryAfter(t *testing.T) {
	l := New(Rate{N: 10, Per: time.Minute}, 100)
	for i := range 10 {
		if ok, _ := l.Take("a", t0); !ok {
			t.Fatalf("request %d refused inside the burst", i)
		}
	}
	ok, wait := l.Take("a", t0)
	if ok || wait != 6*time.Second || RetryAfter(wait) != 6 {
		t.Fatalf("11th: ok=%v wait=%v", ok, wait)
	}
	// A refused request spends nothing: after exactly one interval there is
	// exactly one token.
	if ok, _ := l.Take("a", t0.Add(6*time.Second)); !ok {
		t.Fatal("token not back after 6s")
	}
	if ok, _ := l.Take("a", t0.Add(6*time.Second)); ok {
		t.Fatal("second token after 6s")
	}
	if ok, _ := l.Take("b", t0); !ok {
		t.Fatal("another key shares the bucket")
	}
}

func TestLimiterDisabled(t *testing.T) {
	l := New(Rate{}, 10)
	if l != nil {
		t.Fatal("zero rate built a limiter")
	}
	for range 1000 {
		if ok, _ := l.Take("a", t0); !ok {
			t.Fatal("nil limiter refused")
		}
	}
	if blocked, _ := l.Empty("a", t0); blocked {
		t.Fatal("nil limiter blocked")
	}
}

// docs/threats.md I.82: a flood of distinct client keys does not grow the
// table without bound, and live (limited) buckets survive while idle ones
// exist.
func TestLimiterTableIsBounded(t *testing.T) {
	l := New(Rate{N: 1, Per: time.Second, Burst: 1}, 64)
	for i := range 10_000 {
		l.Take(fmt.Sprintf("k%d", i), t0.Add(time.Duration(i)*time.Millisecond))
		if n := l.Size(); n > 64 {
			t.Fatalf("table grew to %d entries", n)
		}
	}
	// Idle buckets (refilled) are evicted before live ones: the still-empty
	// bucket of a client that keeps hammering is not reset by the flood.
	l2 := New(Rate{N: 1, Per: time.Hour, Burst: 1}, 4)
	l2.Take("hammer", t0)
	for i := range 3 {
		l2.Take(fmt.Sprintf("idle%d", i), t0.Add(-2*time.Hour))
	}
	l2.Take("new", t0)
	if ok, _ := l2.Take("hammer", t0); ok {
		t.Fatal("eviction reset a live, empty bucket while idle ones existed")
	}
}

func TestLimiterEmptyDoesNotSpend(t *testing.T) {
	l := New(Rate{N: 2, Per: time.Minute}, 10)
	if blocked, _ := l.Empty("a", t0); blocked {
		t.Fatal("unknown key blocked")
	}
	l.Take("a", t0)
	l.Take("a", t0)
	blocked, wait := l.Empty("a", t0)
	if !blocked || wait != 30*time.Second {
		t.Fatalf("blocked=%v wait=%v", blocked, wait)
	}
	if blocked, _ := l.Empty("a", t0.Add(30*time.Second)); blocked {
		t.Fatal("still blocked after refill")
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		if got := RetryAfter(d); got != want {
			t.Errorf("RetryAfter(%v) = %d, want %d", d, got, want)
		}
	}
}

// A full table of live buckets drops an eighth at once, so the next
// inserts do not each scan the whole table again (the UI's copy once
// evicted a single bucket per insert under a flood).
func TestLimiterEvictionIsAmortized(t *testing.T) {
	l := New(Rate{N: 1, Per: time.Hour, Burst: 1}, 64)
	for i := range 64 {
		l.Take(fmt.Sprintf("live%d", i), t0)
	}
	l.Take("one-more", t0)
	if n := l.Size(); n != 64-8+1 {
		t.Fatalf("after the first eviction the table holds %d keys, want %d", n, 64-8+1)
	}
	for i := range 7 {
		l.Take(fmt.Sprintf("more%d", i), t0)
	}
	if n := l.Size(); n != 64 {
		t.Fatalf("the next 7 inserts evicted again: %d keys", n)
	}
}

// A read costs one unit per ResultsPerRead results it asks for, at least
// one; ReadN spends them at once or not at all (docs/threats.md K.96).
func TestReadCost(t *testing.T) {
	for size, want := range map[int]int{0: 1, 1: 1, 20: 1, 21: 2, 40: 2, 41: 3, 100: 5} {
		if got := ReadCost(size); got != want {
			t.Errorf("ReadCost(%d) = %d, want %d", size, got, want)
		}
	}
	l := NewLimiters(Limits{ReadPerAddress: Rate{N: 1, Per: time.Second, Burst: 7}}, 0)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, _ := l.ReadN("a", 5, now); !ok {
		t.Fatal("5 of 7 refused")
	}
	if ok, wait := l.ReadN("a", 5, now); ok || wait != 3*time.Second {
		t.Fatalf("5 more of 2 left: ok %v, wait %s", ok, wait)
	}
	// The refusal spent nothing: two single reads still pass.
	for range 2 {
		if ok, _ := l.Read("a", now); !ok {
			t.Fatal("a single read refused")
		}
	}
	if ok, _ := l.Read("a", now); ok {
		t.Fatal("an empty bucket gave a read")
	}
	// More than the burst costs the burst, not forever.
	if ok, _ := l.ReadN("b", 50, now); !ok {
		t.Fatal("a read above the burst with a full bucket refused")
	}
}
