package bench

import (
	"testing"
	"time"
)

// Nearest rank: p50 of 1..100 ms is 50 ms, p99 99 ms; one sample is every
// percentile; none is 0.
func TestPercentileNearestRank(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	got := Summarize(l)
	if got.P50 != 50*time.Millisecond || got.P90 != 90*time.Millisecond || got.P99 != 99*time.Millisecond || got.Max != 100*time.Millisecond {
		t.Fatalf("%+v", got)
	}
	if one := Summarize([]time.Duration{7}); one.P50 != 7 || one.Max != 7 {
		t.Fatalf("%+v", one)
	}
}

func TestPercentileEmpty(t *testing.T) {
	if got := Percentile(nil, 99); got != 0 {
		t.Fatalf("%v", got)
	}
	if got := Summarize(nil); got != (Latency{}) {
		t.Fatalf("%+v", got)
	}
}
