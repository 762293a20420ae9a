package search

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrOverloaded is a query refused because the index is already running
// as many queries as it has room for and could not start this one within
// Options.QueueWait, or Options.MaxQueued queries are already waiting. It
// wraps ErrTimeout: every caller that answers a timed-out query with 503
// answers this one the same way, and the API says to retry after a second.
var ErrOverloaded = fmt.Errorf("%w: too many queries in progress", ErrTimeout)

// gate admits at most a fixed number of computed queries at once (cached
// answers never wait). Search is CPU-bound: running more queries than
// there are cores only makes every one of them slower, so past that a
// query waits its turn in a bounded queue, and is refused at once when the
// queue is full or after a bounded wait, rather than piling up until every
// caller times out (the overload behaviour measured in docs/benchmarks.md).
type gate struct {
	slots    chan struct{}
	waiting  atomic.Int64
	maxQueue int64
	wait     time.Duration
}

func newGate(running, queued int, wait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, running), maxQueue: int64(queued), wait: wait}
}

// enter takes a slot, waiting at most g.wait; release it with leave.
func (g *gate) enter(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	if g.waiting.Add(1) > g.maxQueue {
		g.waiting.Add(-1)
		return fmt.Errorf("%w (%d waiting)", ErrOverloaded, g.maxQueue)
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-t.C:
		return fmt.Errorf("%w (no slot within %s)", ErrOverloaded, g.wait)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) leave() { <-g.slots }
