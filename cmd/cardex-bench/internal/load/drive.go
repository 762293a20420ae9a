package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// drive runs the load: metrics before, Clients clients until Duration has
// passed (requests in flight then finish, each bounded by Timeout), metrics
// right after and once goroutines have settled (bounded by Settle).
func drive(ctx context.Context, c *Config) (*report, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = c.Clients
	tr.MaxIdleConns = c.Clients
	hc := &http.Client{Transport: tr, Timeout: c.Timeout}
	scrape := &scraper{http: hc, url: c.URL + "/metrics"}
	before, err := scrape.sample(ctx)
	if err != nil {
		return nil, err
	}
	p := &pool{runID: rand.Uint32()}
	seed := &client{cfg: c, http: hc, pool: p, rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	// Learn agents and tags before the clock starts, so the first requests
	// of every client already have ids to read. Failures here count like
	// any other request.
	var warm []result
	for _, op := range []string{opList, opTags} {
		warm = append(warm, seed.do(ctx, op))
	}

	stats := newStats()
	for _, r := range warm {
		stats.add(r, 0)
	}
	runCtx, cancel := context.WithTimeout(ctx, c.Duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for range c.Clients {
		cl := &client{cfg: c, http: hc, pool: p, rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
		wg.Go(func() {
			local := newStats()
			// The run context only decides when to stop starting
			// requests: one in flight at the end finishes under its own
			// timeout, so the deadline does not show up as errors.
			for runCtx.Err() == nil {
				t0 := time.Now()
				r := cl.do(ctx, cl.choose())
				local.add(r, time.Since(t0))
			}
			stats.merge(local)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Our own keep-alive connections hold a goroutine each on the server:
	// close them, so what remains is the server's.
	tr.CloseIdleConnections()
	after, err := scrape.sample(ctx)
	if err != nil {
		return nil, err
	}
	settled, err := scrape.settle(ctx, before.goroutines+float64(c.GoroutineSlack), c.Settle)
	if err != nil && !errors.Is(err, errNotSettled) {
		return nil, err
	}
	tr.CloseIdleConnections()
	rep := newReport(c, stats, elapsed, before, after, settled)
	ids := p.made.list()
	rep.Created = len(ids)
	switch {
	case len(ids) == 0:
	case c.Keep:
		if err := writeIDs(c.KeepFile, ids); err != nil {
			return nil, err
		}
		rep.KeptFile = c.KeepFile
	default:
		n, err := removeAgents(ctx, seed, ids, fmt.Sprintf("cardex-bench load run %08x: removing what it submitted", p.runID))
		rep.Removed = n
		if err != nil {
			rep.cleanupFail = err.Error()
		}
	}
	return rep, nil
}
