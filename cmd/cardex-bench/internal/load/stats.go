package load

import (
	"sync"
	"time"
)

// opStats is one operation's outcomes.
type opStats struct {
	requests  int
	latencies []time.Duration
	statuses  map[int]int // HTTP status → count
	errors    int         // transport errors (no status)
	lastErr   string
}

// stats gathers every client's outcomes; each client fills its own and
// merges once at the end, so the hot path takes no lock.
type stats struct {
	mu  sync.Mutex
	ops map[string]*opStats
}

func newStats() *stats { return &stats{ops: map[string]*opStats{}} }

func (s *stats) op(name string) *opStats {
	o := s.ops[name]
	if o == nil {
		o = &opStats{statuses: map[int]int{}}
		s.ops[name] = o
	}
	return o
}

// add records r; a zero latency (warm-up requests) counts the status only.
func (s *stats) add(r result, d time.Duration) {
	o := s.op(r.op)
	o.requests++
	if r.status != 0 {
		o.statuses[r.status]++
	}
	if r.err != nil {
		// A decoding or body error after a status is still a broken
		// answer: count it with the transport errors.
		o.errors++
		o.lastErr = r.err.Error()
	}
	if d > 0 {
		o.latencies = append(o.latencies, d)
	}
}

func (s *stats) merge(other *stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, src := range other.ops {
		dst := s.op(name)
		dst.requests += src.requests
		dst.latencies = append(dst.latencies, src.latencies...)
		for st, n := range src.statuses {
			dst.statuses[st] += n
		}
		dst.errors += src.errors
		if src.lastErr != "" {
			dst.lastErr = src.lastErr
		}
	}
}
