package main

import (
	"context"
	"io"
	"sync"
	"time"
)

// start starts the background work that runs while the server serves:
// the crawler's scheduler and the prober.
func (s *wiring) start() {
	s.crawl.sched.Start()
	if s.prober != nil {
		s.prober.Start()
	}
}

// seed starts the one-off work of a start beside serving — stored views
// rendered, stored versions judged again, the demo's welcome and
// catalogue — and the catalog loop. stop cancels it and waits for it.
func (s *wiring) seed(ctx context.Context, stdout io.Writer, browse string) (stop func()) {
	seedCtx, cancel := context.WithCancel(ctx)
	var seeding sync.WaitGroup
	catalogs := func() { s.cfg.runCatalogs(seedCtx, s.crawl.fetcher, s.svc, s.crawl.sched.Kick, s.log) }
	// Views of card versions stored before this release, or by one that
	// rendered them otherwise (docs/operator-guide.md "Upgrading").
	seeding.Go(func() { renderViews(seedCtx, s.svc, s.log) })
	// Versions an earlier release judged by a rule since changed
	// (migrations 00170; docs/verification.md), judged again from their
	// stored bytes.
	seeding.Go(func() { reverifyStored(seedCtx, s.crawl.sched, s.svc, s.log) })
	if s.demo == nil {
		seeding.Go(catalogs)
	} else {
		if err := s.demo.Welcome(ctx, stdout, s.svc, browse); err != nil {
			s.log.Error("demo", "err", err.Error())
		}
		seeding.Go(func() {
			s.seedDemo(seedCtx)
			catalogs()
		})
	}
	return func() {
		cancel()
		seeding.Wait()
	}
}

// seedDemo seeds the demo catalogue, kicking the crawler and the prober so
// approved agents are crawled and probed at once. The demo crawls its
// catalog host itself while seeding, so the agents it lists are seeded
// with the rest; the catalog loop starts after.
func (s *wiring) seedDemo(ctx context.Context) {
	kick := func() {
		s.crawl.sched.Kick()
		if s.prober != nil {
			s.prober.Kick()
		}
	}
	crawlCatalogs := func(ctx context.Context) []string {
		return s.cfg.crawlCatalogs(ctx, s.crawl.fetcher, s.svc, time.Now(), s.log)
	}
	if err := s.demo.Seed(ctx, s.svc, kick, crawlCatalogs, s.log); err != nil && ctx.Err() == nil {
		s.log.Error("demo catalogue", "err", err.Error())
	}
}

// stop stops the prober and the scheduler: in-flight probes and crawls
// finish within shutdownTimeout, leases are released.
func (s *wiring) stop(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if s.prober != nil {
		if err := s.prober.Shutdown(cctx); err != nil {
			s.log.Warn("prober shutdown", "err", err.Error())
		}
	}
	if err := s.crawl.sched.Shutdown(cctx); err != nil {
		s.log.Warn("crawler shutdown", "err", err.Error())
	}
}
