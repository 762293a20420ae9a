package registry

import (
	"context"
	"sync"

	"gorm.io/gorm"
)

// groupCommit commits concurrent writes of one kind together (group
// commit) on SQLite, where every write transaction waits for the one
// write connection: a catalogue imported with many clients spent most of
// each submission's time queueing for a transaction of a few statements
// (docs/benchmarks.md "Under real load"). Calls that arrive while a
// transaction runs queue here and the next transaction takes them all, up
// to maxGroup, applying each in arrival order: a call refused by its own
// rules (isRefusal: it writes nothing) is answered alone and the others
// commit. A storage failure of a shared transaction writes nothing; each
// call then runs again in a transaction of its own, so one call's failure
// is never another's. A call whose context ended while it queued writes
// nothing and answers the context's error.
//
// PostgreSQL runs the transactions side by side as before: there, one
// queue would put every call's round trips in a row.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*groupCall
	running bool // a goroutine is draining queue
}

// maxGroup bounds the calls of one shared transaction, so the writers of
// other kinds (crawl results, probes) wait for at most one such batch.
const maxGroup = 256

// groupCall is one queued write and, once done is closed, its outcome.
type groupCall struct {
	ctx   context.Context
	apply func(tx *gorm.DB) error
	err   error
	done  chan struct{}
}

// do runs apply in a write transaction, shared with the calls queued
// beside it on SQLite. apply may run twice (the second time alone, after
// a shared transaction failed): it must set its results afresh each time.
func (g *groupCommit) do(ctx context.Context, s *Store, apply func(tx *gorm.DB) error) error {
	if s.dialect != DialectSQLite {
		return s.tx(ctx, apply)
	}
	c := &groupCall{ctx: ctx, apply: apply, done: make(chan struct{})}
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
func (g *groupCommit) drain(s *Store) {
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxGroup)
		if n == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		batch := make([]*groupCall, n)
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
func (g *groupCommit) run(s *Store, batch []*groupCall) {
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
			for _, c := range live {
				// Each call in a savepoint of its own would cost a
				// statement pair; a refusal writes nothing, so none is
				// needed.
				if c.err = c.apply(tx); c.err != nil {
					if !isRefusal(c.err) {
						return c.err
					}
					c.err = translate(c.err)
				}
			}
			return nil
		})
		if err == nil {
			return
		}
	}
	for _, c := range live {
		c.err = s.tx(c.ctx, c.apply)
	}
}
