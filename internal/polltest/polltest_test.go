package polltest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

// A condition met on the fifth check passes, having been checked five
// times; one never met fails once, naming what was awaited, with the state
// a func() string reports at the deadline.
func TestUntil(t *testing.T) {
	var n atomic.Int32
	r := &recorder{TB: t}
	Until(r, "five checks", 10*time.Second, func() bool { return n.Add(1) == 5 })
	if r.fatal != "" || n.Load() != 5 {
		t.Fatalf("fatal %q after %d checks", r.fatal, n.Load())
	}

	r = &recorder{TB: t}
	start := time.Now()
	Until(r, "never", 30*time.Millisecond, func() bool { return false })
	if r.fatal != "timed out after 30ms waiting for never" || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("fatal %q after %v", r.fatal, time.Since(start))
	}

	r = &recorder{TB: t}
	calls := 0
	Until(r, func() string { calls++; return fmt.Sprintf("state %d", calls) }, time.Millisecond, func() bool { return false })
	if r.fatal != "timed out after 1ms waiting for state 1" || calls != 1 {
		t.Fatalf("fatal %q, what called %d times", r.fatal, calls)
	}
}
