package registry

import (
	"context"
	"sync"

	"gorm.io/gorm"
)

// actGroup commits concurrent Act calls together (group commit): every
// write waits for the one write connection of SQLite, or for the change
// lock of PostgreSQL, so an admin tool approving a catalogue with many
// clients spent most of each approval's time queueing for a transaction
// of a few statements (docs/benchmarks.md "Approval throughput"). Calls
// that arrive while a transaction runs queue here and the next
// transaction takes them all, up to MaxBulk, applying each in arrival
// order with the rules of one Act (actIn), as ActMany does: a refused call
// is answered alone and the others commit. A storage failure of a shared
// transaction writes nothing; each call then runs again in its own, so one
// call's failure is never another's. A call whose context ended while it
// queued writes nothing and answers the context's error.
//
// Only SQLite's calls queue: PostgreSQL runs their transactions side by
// side up to the change lock, and one queue would put every call's round
// trips in a row (BenchmarkApproveHTTP/postgres: half the approvals/s).
type actGroup struct {
	mu      sync.Mutex
	queue   []*actCall
	running bool // a goroutine is draining queue
}

// actCall is one queued Act and, once done is closed, its outcome.
type actCall struct {
	ctx  context.Context
	p    Principal
	id   string
	a    Action
	req  ActionRequest
	out  *agentRow
	err  error
	done chan struct{}
}

// do applies one action, in a transaction shared with the calls queued
// beside it, and returns the agent row after it.
func (g *actGroup) do(ctx context.Context, s *Service, p Principal, id string, a Action, req ActionRequest) (*agentRow, error) {
	c := &actCall{ctx: ctx, p: p, id: id, a: a, req: req, done: make(chan struct{})}
	if s.store.dialect != DialectSQLite {
		return s.actAlone(c)
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
	return c.out, c.err
}

// drain runs transactions until the queue is empty.
func (g *actGroup) drain(s *Service) {
	for {
		g.mu.Lock()
		n := min(len(g.queue), MaxBulk)
		if n == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		batch := make([]*actCall, n)
		copy(batch, g.queue)
		g.queue = append(g.queue[:0], g.queue[n:]...)
		g.mu.Unlock()
		s.actBatch(batch)
		for _, c := range batch {
			close(c.done)
		}
	}
}

// actBatch applies the calls, together when more than one is still
// wanted, and sets each one's outcome.
func (s *Service) actBatch(batch []*actCall) {
	live := batch[:0:0]
	for _, c := range batch {
		if c.err = c.ctx.Err(); c.err == nil {
			live = append(live, c)
		}
	}
	if len(live) > 1 {
		// No one caller's cancellation may undo the others' actions: the
		// shared transaction runs to its end (a few statements per call).
		err := s.store.tx(context.WithoutCancel(live[0].ctx), func(tx *gorm.DB) error {
			var w actWrites
			for _, c := range live {
				c.out, c.err = s.actIn(tx, c.p, c.id, c.a, c.req, s.now(), &w)
				if c.err != nil && !isRefusal(c.err) {
					return c.err
				}
			}
			return s.writeActs(tx, &w)
		})
		if err == nil {
			return
		}
	}
	for _, c := range live {
		c.out, c.err = s.actAlone(c)
	}
}

// actAlone applies one call in its own transaction.
func (s *Service) actAlone(c *actCall) (*agentRow, error) {
	var out *agentRow
	err := s.store.tx(c.ctx, func(tx *gorm.DB) error {
		var w actWrites
		var err error
		if out, err = s.actIn(tx, c.p, c.id, c.a, c.req, s.now(), &w); err != nil {
			return err
		}
		return s.writeActs(tx, &w)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
