package ratelimit

import (
	"context"
	"sync"
)

// Slots caps the requests in flight per key (a canonical host): at most
// Limit at once, the others wait their turn in arrival order, so a waiter
// is served after those queued before it and never overtaken (a queue,
// not a budget: nobody's spending refuses anyone else). A nil *Slots
// allows everything.
type Slots struct {
	limit int

	mu   sync.Mutex
	keys map[string]*slotQueue
}

type slotQueue struct {
	held    int
	waiting []chan struct{} // FIFO; a waiter's channel is closed when it is handed a slot
}

// NewSlots allows limit requests in flight per key; nil when limit ≤ 0.
func NewSlots(limit int) *Slots {
	if limit <= 0 {
		return nil
	}
	return &Slots{limit: limit, keys: map[string]*slotQueue{}}
}

// Acquire waits for a slot of key until ctx ends. On success the caller
// must call release once; on ctx's end it holds nothing and gets ctx's
// error.
func (s *Slots) Acquire(ctx context.Context, key string) (release func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	s.mu.Lock()
	q := s.keys[key]
	if q == nil {
		q = &slotQueue{}
		s.keys[key] = q
	}
	if q.held < s.limit && len(q.waiting) == 0 {
		q.held++
		s.mu.Unlock()
		return s.releaser(key), nil
	}
	ch := make(chan struct{})
	q.waiting = append(q.waiting, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return s.releaser(key), nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
		// Handed a slot as ctx ended: pass it on.
		s.release(key)
	default:
		for i, w := range q.waiting {
			if w == ch {
				q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
				break
			}
		}
		s.forget(key, q)
	}
	return nil, ctx.Err()
}

func (s *Slots) releaser(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.release(key)
		})
	}
}

// release hands key's slot to the first waiter, or frees it; s.mu held.
func (s *Slots) release(key string) {
	q := s.keys[key]
	if len(q.waiting) > 0 {
		close(q.waiting[0])
		q.waiting = q.waiting[1:]
		return
	}
	q.held--
	s.forget(key, q)
}

func (s *Slots) forget(key string, q *slotQueue) {
	if q.held == 0 && len(q.waiting) == 0 {
		delete(s.keys, key)
	}
}

// InFlight is the number of slots of key held now.
func (s *Slots) InFlight(key string) int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.keys[key]; q != nil {
		return q.held
	}
	return 0
}
