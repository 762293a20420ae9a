package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/demo"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/pace"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/registry"
)

// wiring is what serve composes before it listens: the store (the demo's
// with --demo), the use cases over it, the search runtime, the crawler,
// the prober and the one HTTP handler. close undoes it in reverse order.
type wiring struct {
	cfg    *serveConfig
	log    *slog.Logger
	store  *registry.Store
	demo   *demo.Demo // nil without --demo
	svc    *registry.Service
	search *searchRuntime
	crawl  *crawlRuntime
	prober *prober.Prober // nil when --probe-interval is 0
	// pace serves queries ahead of background work: the handler marks
	// interactive requests, the indexer and the crawler's and prober's
	// writes wait their turn (package pace).
	pace    *pace.Gate
	handler http.Handler
	closers []func() // run last first by close
}

// wire composes the server's parts, stopped: the crawler and the
// prober start at start, once the server listens.
func wire(ctx context.Context, cfg *serveConfig, log *slog.Logger) (_ *wiring, err error) {
	s := &wiring{cfg: cfg, log: log, pace: pace.New(pace.Options{})}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	allow, err := s.openStore(ctx)
	if err != nil {
		return nil, err
	}
	fetcher, err := cfg.fetcher(allow, log)
	if err != nil {
		return nil, err
	}
	s.onClose(fetcher.Close)
	if s.svc, err = cfg.service(s.store, fetcher, allow, log); err != nil {
		return nil, err
	}
	if err := s.startSearch(ctx); err != nil {
		return nil, err
	}
	m := newMetrics()
	if s.crawl, err = newCrawl(cfg, fetcher, s.svc, m, s.pace, log); err != nil {
		return nil, err
	}
	probeFetcher, err := s.probeFetcher(fetcher, allow)
	if err != nil {
		return nil, err
	}
	if s.prober, err = newProber(cfg, s.crawl, probeFetcher, s.svc, m, s.pace, log); err != nil {
		return nil, err
	}
	m.gauges(s.crawl.sched, s.search, s.svc, s.store)
	m.paceGauges(s.pace)
	if s.prober != nil {
		m.probeGauges(s.prober)
	}
	// ARD peers are asked through the one hardened client (docs/discovery.md
	// "Federated search").
	cfg.ardCall = crawler.ARDPeerCall(fetcher)
	if s.handler, err = cfg.handler(s.svc, s.store, s.search, s.crawl.sched.Kick, m, s.pace, log); err != nil {
		return nil, err
	}
	return s, nil
}

// onClose adds f to what close runs.
func (s *wiring) onClose(f func()) { s.closers = append(s.closers, f) }

// close closes what wire opened, last first: the search index before
// the store.
func (s *wiring) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// openStore opens the store in --data or at --database-url, or with --demo
// starts the demo in its own data directory. It returns the network
// allowances of the crawl: the operator's, or the demo fleet's addresses
// and nothing else.
func (s *wiring) openStore(ctx context.Context) (crawlNetwork, error) {
	cfg, log := s.cfg, s.log
	if cfg.Demo {
		dm, err := demo.Start(ctx, demo.Config{DataDir: cfg.Store.data, DataDirSet: cfg.dataSet, Logger: log})
		if err != nil {
			return crawlNetwork{}, err
		}
		s.onClose(func() {
			if err := dm.Close(); err != nil {
				log.Error("closing store", "err", err.Error())
			}
		})
		s.demo, s.store, cfg.Store.data = dm, dm.Store, dm.Dir
		return crawlNetwork{AllowNetworks: dm.Networks(), AllowInsecureHTTP: true}, nil
	}
	if cfg.Store.databaseURL == "" {
		if err := demo.CheckNotDemoDir(cfg.Store.data); err != nil {
			return crawlNetwork{}, err
		}
	}
	store, err := registry.Open(ctx, registry.OpenOptions{
		DataDir:     cfg.Store.data,
		DatabaseURL: cfg.Store.databaseURL,
		Logger:      log,
		ServerLock:  true,
	})
	if err != nil {
		return crawlNetwork{}, fmt.Errorf("open store: %w", err)
	}
	s.store = store
	s.onClose(func() { closeStore(store, log) })
	return crawlNetwork{AllowNetworks: cfg.AllowNetworks, AllowInsecureHTTP: cfg.AllowInsecureHTTP}, nil
}

// service is the registry's use cases over store, with the server's
// settings; host claims and submitted catalogs are fetched through f.
func (c *serveConfig) service(store *registry.Store, f *fetch.Fetcher, allow crawlNetwork, log *slog.Logger) (*registry.Service, error) {
	autoApprove, err := registry.ParseAutoApprove(c.AutoApprove)
	if err != nil {
		return nil, err
	}
	return registry.NewService(store, registry.ServiceConfig{
		URLPolicy: registry.URLPolicy{AllowInsecureHTTP: allow.AllowInsecureHTTP, AllowNetworks: allow.AllowNetworks},
		Logger:    log,
		GoneAfter: c.GoneAfter,
		// Admin web sessions (docs/security.md "Admin sessions").
		SessionIdle:   c.SessionIdle,
		SessionMaxAge: c.SessionMaxAge,
		// Host claims are fetched by the crawler's one hardened client,
		// under the same network policy as cards (docs/claims.md).
		ClaimFetcher:              f,
		ClaimAttemptInterval:      c.ClaimVerifyInterval,
		ClaimsPendingPerRequester: c.ClaimPending,
		AutoApprove:               autoApprove,
		// Bounds of what strangers' catalogs and keys can make Cardex do
		// (docs/threats.md K.97).
		AutoApprovePerDomain: c.AutoApprovePerDomain,
		CatalogMaxNew:        c.CatalogMaxNew,
		CatalogMaxAgents:     c.CatalogMaxAgents,
		// So are catalogs submitted directly (docs/discovery.md).
		CatalogCrawler:  crawler.CatalogCrawler{Fetcher: f},
		CatalogInterval: c.CrawlInterval,
	}), nil
}

// startSearch opens the index and starts the indexer. The index lives in
// --data with either store: it is derived data each process keeps for
// itself (docs/design.md).
func (s *wiring) startSearch(ctx context.Context) error {
	opts := defaultSearchOptions
	opts.synonyms = s.cfg.synonyms
	opts.pace = s.pace
	sr, err := startSearchWith(ctx, s.cfg.Store.data, s.svc, s.log, opts)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	s.search = sr
	s.onClose(func() {
		if err := sr.Close(); err != nil {
			s.log.Error("closing search index", "err", err.Error())
		}
	})
	return nil
}

// probeFetcher is the prober's client: the crawler's f, or the demo's own,
// which reaches only the demo's agents.
func (s *wiring) probeFetcher(f *fetch.Fetcher, allow crawlNetwork) (*fetch.Fetcher, error) {
	if s.demo == nil {
		return f, nil
	}
	pol, err := s.cfg.policy(allow)
	if err != nil {
		return nil, err
	}
	pf, err := s.demo.ProbeFetcher(pol, s.log)
	if err != nil {
		return nil, err
	}
	s.onClose(pf.Close)
	return pf, nil
}
