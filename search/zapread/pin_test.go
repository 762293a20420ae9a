package zapread

import (
	"sync"
	"sync/atomic"
	"testing"

	index "github.com/blevesearch/bleve_index_api"
)

// countingReader counts its Close calls.
type countingReader struct {
	index.IndexReader
	closed *atomic.Int32
}

func (c countingReader) Close() error {
	c.closed.Add(1)
	return nil
}

// A pinned reader outlives its pin while a query reads it, and is closed
// exactly once, by whichever of the two lets go last.
func TestPinnedReaderClosedOnceByTheLastUser(t *testing.T) {
	var c1, c2 atomic.Int32
	r1, r2 := countingReader{closed: &c1}, countingReader{closed: &c2}
	rs := &Readers{}
	rs.Pin(r1)
	got, done, err := rs.Get()
	if err != nil || got != Reader(r1) {
		t.Fatalf("Get: %v, %v; want the pinned reader", got, err)
	}
	rs.Pin(r2)
	if c1.Load() != 0 {
		t.Fatal("the old pinned reader was closed while a query read it")
	}
	done()
	if c1.Load() != 1 {
		t.Fatalf("the old pinned reader closed %d times after its last query, want 1", c1.Load())
	}
	if got, done, _ := rs.Get(); got != Reader(r2) {
		t.Fatal("Get after a second Pin did not hand out the new reader")
	} else {
		rs.Unpin()
		if c2.Load() != 0 {
			t.Fatal("unpinned while read: closed too early")
		}
		done()
	}
	if c1.Load() != 1 || c2.Load() != 1 {
		t.Fatalf("closed %d and %d times, want 1 and 1", c1.Load(), c2.Load())
	}
}

// Queries and pins racing: every reader pinned is closed exactly once, and
// no query holds a closed one.
func TestPinnedReadersUnderConcurrency(t *testing.T) {
	const pins = 200
	counts := make([]atomic.Int32, pins)
	rs := &Readers{}
	rs.Pin(countingReader{closed: &counts[0]})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad atomic.Int32
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, done, err := rs.Get()
				if err != nil {
					bad.Add(1)
					return
				}
				if r.(countingReader).closed.Load() != 0 {
					bad.Add(1)
				}
				done()
			}
		})
	}
	for i := 1; i < pins; i++ {
		rs.Pin(countingReader{closed: &counts[i]})
	}
	close(stop)
	wg.Wait()
	rs.Unpin()
	if bad.Load() != 0 {
		t.Fatalf("%d reads of a closed reader", bad.Load())
	}
	for i := range counts {
		if n := counts[i].Load(); n != 1 {
			t.Fatalf("reader %d closed %d times, want 1", i, n)
		}
	}
}
