package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
)

// Two slots per key: a third caller waits, is served in arrival order when
// a slot is released, and a waiter whose context ends holds nothing.
func TestSlotsQueueInOrder(t *testing.T) {
	s := NewSlots(2)
	ctx := t.Context()
	r1, _ := s.Acquire(ctx, "h")
	r2, _ := s.Acquire(ctx, "h")
	if n := s.InFlight("h"); n != 2 {
		t.Fatalf("in flight %d", n)
	}
	other, err := s.Acquire(ctx, "other")
	if err != nil {
		t.Fatal("another key waits for h's slots")
	}
	other()

	gone, cancel := context.WithCancel(ctx)
	cancelled := make(chan error)
	go func() {
		_, err := s.Acquire(gone, "h")
		cancelled <- err
	}()
	polltest.Until(t, "the cancelled waiter to queue", 5*time.Second, func() bool { return waiters(s, "h") == 1 })
	order := make(chan int, 2)
	for i := range 2 {
		go func() {
			rel, err := s.Acquire(ctx, "h")
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			rel()
		}()
		polltest.Until(t, fmt.Sprintf("waiter %d to queue", i), 5*time.Second, func() bool { return waiters(s, "h") == 2+i })
	}
	cancel()
	if err := <-cancelled; err != context.Canceled {
		t.Fatalf("cancelled waiter: %v", err)
	}
	r1()
	r1() // twice is once
	if a := <-order; a != 0 {
		t.Fatalf("waiter %d served first", a)
	}
	if b := <-order; b != 1 {
		t.Fatalf("waiter %d served second", b)
	}
	r2()
	polltest.Until(t, "every slot of h to be released", 5*time.Second, func() bool { return s.InFlight("h") == 0 })
	if len(s.keys) != 0 {
		t.Fatalf("idle keys kept: %v", s.keys)
	}
	var none *Slots
	if rel, err := none.Acquire(ctx, "h"); err != nil || rel == nil {
		t.Fatal("nil Slots refused")
	}
	if NewSlots(0) != nil {
		t.Fatal("zero limit built Slots")
	}
}

func waiters(s *Slots, key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.keys[key]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// A publisher token spends its own budget, keyed by its id, n units at a
// time; neither the address nor the domain budget is touched.
func TestLimitersSubmitToken(t *testing.T) {
	l := NewLimiters(Limits{SubmitPerAddress: Rate{N: 1, Per: time.Minute}, SubmitPerDomain: Rate{N: 1, Per: time.Hour},
		SubmitPerToken: Rate{N: 3, Per: time.Minute}}, 0)
	if r := l.SubmitToken("t1", 2, t0); r != nil {
		t.Fatalf("two units refused: %+v", r)
	}
	if r := l.SubmitToken("t1", 2, t0); r == nil || r.Detail != "too many requests with this token" || r.Wait != 20*time.Second {
		t.Fatalf("past the budget: %+v", r)
	}
	if r := l.SubmitToken("t1", 1, t0); r != nil {
		t.Fatalf("the last unit refused: %+v", r)
	}
	if r := l.SubmitToken("t2", 3, t0); r != nil {
		t.Fatalf("another token shares the budget: %+v", r)
	}
	// More than the burst costs the whole burst: a full bucket admits it,
	// and nothing is left after.
	if r := l.SubmitToken("t3", 4, t0); r != nil {
		t.Fatalf("more than the burst, full bucket: %+v", r)
	}
	if r := l.SubmitToken("t3", 1, t0); r == nil || r.Wait != 20*time.Second {
		t.Fatalf("after a request worth the burst: %+v", r)
	}
	if r := l.Submit("addr", "https://a.example.com/", t0); r != nil {
		t.Fatalf("the address budget was spent by tokens: %+v", r)
	}
	if TokenKey("192.0.2.1") == "192.0.2.1" {
		t.Fatal("a token key equals an address key")
	}
}
