package zapread

import (
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"
)

// Reader is a snapshot of an index: the segments it had when the reader
// was taken, kept until it is closed.
type Reader = index.IndexReader

// Readers hands out the snapshot that queries read: the pinned one while
// there is one, else the index's newest. search pins the last snapshot
// whose segments it has decoded into tables, so that a merge's new
// segment is decoded by the indexer before any query reads it, instead of
// by the queries that meet it first (search/pin.go).
type Readers struct {
	idx    bleve.Index
	pinned atomic.Pointer[pinned]
}

// pinned is a pinned reader and its references: one while it is pinned,
// one for each query reading it. The last release closes it.
type pinned struct {
	r    Reader
	refs atomic.Int64
}

// NewReaders hands out idx's snapshots, none pinned.
func NewReaders(idx bleve.Index) *Readers { return &Readers{idx: idx} }

// Get returns the snapshot to read and the function that gives it back
// (call it once, when the read is done).
func (rs *Readers) Get() (Reader, func(), error) {
	for {
		p := rs.pinned.Load()
		if p == nil {
			break
		}
		if p.acquire() {
			return p.r, p.release, nil
		}
		// Unpinned and released between the load and the acquire: the
		// pointer has moved on; load it again.
	}
	return rs.Newest()
}

// Newest returns the index's newest snapshot, pinned or not, and the
// function that closes it.
func (rs *Readers) Newest() (Reader, func(), error) {
	adv, err := rs.idx.Advanced()
	if err != nil {
		return nil, nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, nil, err
	}
	return r, func() { _ = r.Close() }, nil
}

// Pin makes r the snapshot Get hands out, taking it over: r is closed once
// another is pinned (or Unpin is called) and no reader of it remains.
func (rs *Readers) Pin(r Reader) {
	p := &pinned{r: r}
	p.refs.Store(1)
	if old := rs.pinned.Swap(p); old != nil {
		old.release()
	}
}

// Pinned says whether Get hands out a pinned snapshot.
func (rs *Readers) Pinned() bool { return rs.pinned.Load() != nil }

// Unpin makes Get hand out the newest snapshot again.
func (rs *Readers) Unpin() {
	if old := rs.pinned.Swap(nil); old != nil {
		old.release()
	}
}

func (p *pinned) acquire() bool {
	for {
		n := p.refs.Load()
		if n <= 0 {
			return false
		}
		if p.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (p *pinned) release() {
	if p.refs.Add(-1) == 0 {
		_ = p.r.Close()
	}
}
