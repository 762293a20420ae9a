package registry

import (
	"context"
	"sync"

	"gorm.io/gorm"
)

// groupCommit commits concurrent writes of one kind together (group
// commit) on SQLite, where every write transaction waits for the one
// write connection: an admin tool approving a catalogue, or a catalogue
// imported with many clients, spent most of each call's time queueing for
// a transaction of a few statements (docs/benchmarks.md "Approval
// throughput", "Under real load"). Calls that arrive while a transaction
// runs queue here and the next transaction takes them, up to maxGroup,
// applying each in arrival order: a call refused by its own rules
// (isRefusal: it writes nothing) is answered alone and the others commit.
// What the calls of one transaction gather in a W is written after the
// last of them by finish (the curation actions' audit and change-log rows,
// one statement each). A storage failure of a shared transaction writes
// nothing; each call then runs again in a transaction of its own, so one
// call's failure is never another's. A call whose context ended while it
// queued writes nothing and answers the context's error.
//
// PostgreSQL runs each call's transaction side by side as before: there,
// one queue would put every call's round trips in a row
// (BenchmarkApproveHTTP/postgres: half the approvals/s).
type groupCommit[W any] struct {
	mu      sync.Mutex
	queue   []*groupCall[W]
	running bool // a goroutine is draining queue
	// finish, when set, writes what a transaction's calls gathered.
	finish func(tx *gorm.DB, w *W) error
}

// maxGroup bounds the calls of one shared transaction, so the writers of
// other kinds (crawl results, probes) wait for at most one such batch.
const maxGroup = 256

// groupCall is one queued write and, once done is closed, its outcome.
type groupCall[W any] struct {
	ctx   context.Context
	apply func(tx *gorm.DB, w *W) error
	err   error
	done  chan struct{}
}

// do runs apply in a write transaction, shared with the calls queued
// beside it on SQLite. apply may run twice (the second time alone, after
// a shared transaction failed): it must set its results afresh each time.
func (g *groupCommit[W]) do(ctx context.Context, s *Store, apply func(tx *gorm.DB, w *W) error) error {
	c := &groupCall[W]{ctx: ctx, apply: apply, done: make(chan struct{})}
	if s.dialect != DialectSQLite {
		return g.alone(s, c)
	}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	start := !g.running
	g.running = true
	g.mu.Unlock()
	if start {
		go g.drain(s)
	}
	<-c.done
	return c.err
}

// drain runs transactions until the queue is empty.
func (g *groupCommit[W]) drain(s *Store) {
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxGroup)
		if n == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		batch := make([]*groupCall[W], n)
		copy(batch, g.queue)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		g.mu.Unlock()
		g.run(s, batch)
		for _, c := range batch {
			close(c.done)
		}
	}
}

// run applies the calls, together when more than one is still wanted,
// and sets each one's outcome.
func (g *groupCommit[W]) run(s *Store, batch []*groupCall[W]) {
	live := batch[:0:0]
	for _, c := range batch {
		if c.err = c.ctx.Err(); c.err == nil {
			live = append(live, c)
		}
	}
	if len(live) > 1 {
		// No one caller's cancellation may undo the others' writes: the
		// shared transaction runs to its end (a few statements per call).
		err := s.tx(context.WithoutCancel(live[0].ctx), func(tx *gorm.DB) error {
			var w W
			for _, c := range live {
				if c.err = c.apply(tx, &w); c.err != nil {
					if !isRefusal(c.err) {
						return c.err
					}
					c.err = translate(c.err)
				}
			}
			return g.end(tx, &w)
		})
		if err == nil {
			return
		}
	}
	for _, c := range live {
		c.err = g.alone(s, c)
	}
}

// alone runs one call in a transaction of its own.
func (g *groupCommit[W]) alone(s *Store, c *groupCall[W]) error {
	return s.tx(c.ctx, func(tx *gorm.DB) error {
		var w W
		if err := c.apply(tx, &w); err != nil {
			return err
		}
		return g.end(tx, &w)
	})
}

func (g *groupCommit[W]) end(tx *gorm.DB, w *W) error {
	if g.finish == nil {
		return nil
	}
	return g.finish(tx, w)
}
