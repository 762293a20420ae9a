package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cardexhq/cardex/api"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/web"
)

// Server timeouts. Slow clients cannot hold connections open (slowloris);
// shutdown waits this long for in-flight requests before cutting them.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	shutdownTimeout   = 15 * time.Second
)

// runServe is `cardex serve`: compose the store, the search runtime, the
// crawler, the API, the web UI and /metrics in one process, serve until ctx
// ends (SIGINT/SIGTERM in main), then shut down in order.
func runServe(ctx context.Context, e *env, args []string) int {
	cfg, err := parseServeConfig(args, e.getenv, e.stdout, e.stderr)
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errConfigDumped) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex serve:", err)
		fmt.Fprintln(e.stderr, "Run 'cardex serve --help' for the settings.")
		return exitUsage
	}
	log := cfg.logger(e.stderr)
	if err := serve(ctx, cfg, log, e.stdout); err != nil {
		log.Error("serve failed", "err", err.Error())
		return exitFail
	}
	return exitOK
}

// serve runs the server until ctx ends. Shutdown order: stop accepting
// HTTP and finish in-flight requests (bounded), stop the demo seeding,
// stop the prober and the scheduler (in-flight probes and crawls finish
// within a bound, leases are released), stop the indexer and close the index, close the store.
func serve(ctx context.Context, cfg *serveConfig, log *slog.Logger, stdout io.Writer) error {
	allow := crawlNetwork{AllowNetworks: cfg.AllowNetworks, AllowInsecureHTTP: cfg.AllowInsecureHTTP}
	var (
		demo      *demoFleet
		demoFirst bool
	)
	var store *registry.Store
	if cfg.Demo {
		dir, first, st, err := openDemoStore(ctx, cfg, log)
		if err != nil {
			return err
		}
		store, demoFirst, cfg.Store.data = st, first, dir
		defer closeStore(store, log)
		marker, err := readDemoMarker(dir)
		if err != nil {
			return err
		}
		if demo, err = startDemoFleet(log, marker.Ports); err != nil {
			return err
		}
		defer demo.Close()
		if demo.ports != marker.Ports {
			if err := writeDemoPorts(dir, demo.ports); err != nil {
				return err
			}
		}
		// The demo allows its own fleet's addresses and nothing else.
		allow = crawlNetwork{AllowNetworks: demo.nets, AllowInsecureHTTP: true}
	} else {
		if cfg.Store.databaseURL == "" {
			if err := checkNotDemoDir(cfg.Store.data); err != nil {
				return err
			}
		}
		var err error
		store, err = registry.Open(ctx, registry.OpenOptions{
			DataDir:     cfg.Store.data,
			DatabaseURL: cfg.Store.databaseURL,
			Logger:      log,
			ServerLock:  true,
		})
		if err != nil {
			return fmt.Errorf("open store: %w", err)
		}
		defer closeStore(store, log)
	}
	fetcher, err := cfg.fetcher(allow, log)
	if err != nil {
		return err
	}
	defer fetcher.Close()
	autoApprove, err := registry.ParseAutoApprove(cfg.AutoApprove)
	if err != nil {
		return err
	}
	svc := registry.NewService(store, registry.ServiceConfig{
		URLPolicy: registry.URLPolicy{AllowInsecureHTTP: allow.AllowInsecureHTTP, AllowNetworks: allow.AllowNetworks},
		Logger:    log,
		GoneAfter: cfg.GoneAfter,
		// Admin web sessions (docs/security.md "Admin sessions").
		SessionIdle:   cfg.SessionIdle,
		SessionMaxAge: cfg.SessionMaxAge,
		// Host claims are fetched by the crawler's one hardened client,
		// under the same network policy as cards (docs/claims.md).
		ClaimFetcher:              fetcher,
		ClaimAttemptInterval:      cfg.ClaimVerifyInterval,
		ClaimsPendingPerRequester: cfg.ClaimPending,
		AutoApprove:               autoApprove,
		// Bounds of what strangers' catalogs and keys can make Cardex do
		// (docs/threats.md K.97).
		AutoApprovePerDomain: cfg.AutoApprovePerDomain,
		CatalogMaxNew:        cfg.CatalogMaxNew,
		CatalogMaxAgents:     cfg.CatalogMaxAgents,
		// So are catalogs submitted directly (docs/discovery.md).
		CatalogCrawler:  crawler.CatalogCrawler{Fetcher: fetcher},
		CatalogInterval: cfg.CrawlInterval,
	})
	// The index lives in --data with either store: it is derived data each
	// process keeps for itself (docs/design.md).
	searchOpts := defaultSearchOptions
	searchOpts.synonyms = cfg.synonyms
	sr, err := startSearchWith(ctx, cfg.Store.data, svc, log, searchOpts)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer func() {
		if err := sr.Close(); err != nil {
			log.Error("closing search index", "err", err.Error())
		}
	}()
	m := newMetrics()
	cr, err := newCrawl(cfg, fetcher, svc, m, log)
	if err != nil {
		return err
	}
	probeFetcher := fetcher
	if demo != nil {
		if probeFetcher, err = demo.probeFetcher(cfg, allow, log); err != nil {
			return err
		}
		defer probeFetcher.Close()
	}
	pr, err := newProber(cfg, cr, probeFetcher, svc, m, log)
	if err != nil {
		return err
	}
	m.gauges(cr.sched, sr, svc, store)
	cfg.ardCall = crawler.ARDPeerCall(fetcher)
	handler, err := cfg.handler(svc, store, sr, cr.sched.Kick, m, log)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil && cfg.Demo && !cfg.addrSet && errors.Is(err, syscall.EADDRINUSE) {
		// Another demo (or anything else) has the default port: a demo
		// started without --addr takes a free one and says where.
		log.Info("demo: the default address is in use, listening on a free port", "addr", cfg.Addr)
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
	tlsOn := cfg.TLSCert != ""
	log.Info("listening", "addr", ln.Addr().String(), "tls", tlsOn, "store", store.Dialect(), "demo", cfg.Demo,
		"gomaxprocs", runtime.GOMAXPROCS(0))
	if !tlsOn && !strings.HasPrefix(cfg.BaseURL, "https://") && !loopbackOnly(ln.Addr()) {
		// docs/security.md: the admin cookie is a Secure __Host- cookie,
		// which browsers keep over plain HTTP only on loopback.
		log.Warn("admin sign-in in the web UI needs TLS: set --tls-cert/--tls-key, or --base-url https://… behind a TLS-terminating proxy; API tokens work regardless")
	}
	if cfg.AddrFile != "" {
		if err := writeAddrFile(cfg.AddrFile, ln.Addr().String()); err != nil {
			ln.Close()
			return err
		}
	}
	served := make(chan error, 1)
	go func() {
		if tlsOn {
			served <- srv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	cr.sched.Start()
	if pr != nil {
		pr.Start()
	}
	seedCtx, stopSeed := context.WithCancel(ctx)
	var seeding sync.WaitGroup
	catalogs := func() { cfg.runCatalogs(seedCtx, cr.fetcher, svc, cr.sched.Kick, log) }
	// Views of card versions stored before this release, or by one that
	// rendered them otherwise (docs/operator-guide.md "Upgrading").
	seeding.Go(func() { renderViews(seedCtx, svc, log) })
	// Versions an earlier release judged by a rule since changed
	// (migrations 00170; docs/verification.md), judged again from their
	// stored bytes.
	seeding.Go(func() { reverifyStored(seedCtx, cr.sched, svc, log) })
	if demo == nil {
		seeding.Go(catalogs)
	} else {
		if err := demoWelcome(ctx, stdout, svc, demoFirst, browseURL(ln.Addr(), tlsOn), cfg.Store.data); err != nil {
			log.Error("demo", "err", err.Error())
		}
		seeding.Go(func() {
			kick := func() {
				cr.sched.Kick()
				if pr != nil {
					pr.Kick() // approved agents are probed at once
				}
			}
			// The demo crawls its catalog host itself while seeding, so
			// the agents it lists are seeded with the rest; the catalog
			// loop starts after.
			crawlCatalogs := func(ctx context.Context) []string {
				return cfg.crawlCatalogs(ctx, cr.fetcher, svc, time.Now(), log)
			}
			if err := demo.seed(seedCtx, svc, kick, crawlCatalogs, log); err != nil && seedCtx.Err() == nil {
				log.Error("demo catalogue", "err", err.Error())
			}
			catalogs()
		})
	}

	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if serveErr == nil {
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("in-flight requests cut off at the shutdown deadline", "err", err.Error())
			srv.Close()
		}
		serveErr = <-served
	}
	stopSeed()
	seeding.Wait()
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer ccancel()
	if pr != nil {
		if err := pr.Shutdown(cctx); err != nil {
			log.Warn("prober shutdown", "err", err.Error())
		}
	}
	if err := cr.sched.Shutdown(cctx); err != nil {
		log.Warn("crawler shutdown", "err", err.Error())
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serveErr)
	}
	log.Info("stopped")
	return nil
}

// handler builds the API and the web UI over svc and composes them with
// /metrics into the server's one handler.
func (c *serveConfig) handler(svc *registry.Service, ready api.Readiness, sr *searchRuntime, kick func(), m *metrics, log *slog.Logger) (http.Handler, error) {
	// One set of buckets for both faces: a client has one budget.
	limits := ratelimit.NewLimiters(c.limits(), 0)
	c.limiters = limits // the scheduled catalog crawl spends the domains' budgets too
	apiH, err := api.New(api.Config{
		Service:        svc,
		Ready:          ready,
		Logger:         log,
		Limiters:       limits,
		TrustedProxies: c.TrustedProxies,
		BaseURL:        c.BaseURL,
		Search:         sr.Searcher(),
		SearchReady:    sr.Ready, // /readyz names a lagging index as such
		Reindex:        sr.Reindex,
		Kick:           kick,
		Observe:        m.observe,
		ARD:            api.ARDConfig{Peers: c.ARDPeers, Call: c.ardCall},
	})
	if err != nil {
		return nil, err
	}
	webH, err := web.New(web.Config{
		Service:        svc,
		Index:          sr.Index(),
		Logger:         log,
		BaseURL:        c.BaseURL,
		Demo:           c.Demo,
		Limiters:       limits,
		TrustedProxies: c.TrustedProxies,
		Kick:           kick,
		OpenAPI:        api.OpenAPI,
		Federate:       c.webFederate(),
	})
	if err != nil {
		return nil, err
	}
	surfaces, err := c.discoverySurfaces(svc, sr.Searcher(), c.gate(svc, limits), log)
	if err != nil {
		return nil, err
	}
	for i := range surfaces {
		surfaces[i].handler = routeLog(surfaces[i].route, surfaces[i].handler, log, m.observe)
	}
	return compose(apiH, accessLog(webH, log, m.observe), m.handler(), surfaces...), nil
}

// loopbackOnly reports whether addr is a loopback address (not an
// unspecified one, which listens on every interface).
func loopbackOnly(addr net.Addr) bool {
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().IsLoopback()
}

// browseURL is where a person on this machine opens the UI: an
// unspecified listen address (":8080") is reached on 127.0.0.1.
func browseURL(addr net.Addr, tlsOn bool) string {
	ap, err := netip.ParseAddrPort(addr.String())
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	if err != nil {
		return scheme + "://" + addr.String() + "/"
	}
	if ap.Addr().IsUnspecified() {
		ap = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ap.Port())
	}
	return scheme + "://" + ap.String() + "/"
}

// writeAddrFile writes the bound address atomically, so a reader polling
// for the file never sees it half-written.
func writeAddrFile(path, addr string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".addr-*")
	if err != nil {
		return fmt.Errorf("addr file: %w", err)
	}
	_, werr := tmp.WriteString(addr + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("addr file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("addr file: %w", err)
	}
	return nil
}

// renderViews stores the card views that current versions lack, logging
// how many when there were any.
func renderViews(ctx context.Context, svc *registry.Service, log *slog.Logger) {
	start := time.Now()
	n, err := svc.RenderViews(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Error("rendering stored card views", "err", err.Error(), "rendered", n)
	case n > 0:
		log.Info("rendered stored card views", "views", n, "took", time.Since(start).Round(time.Millisecond).String())
	}
}

// reverifyStored judges again the stored versions an upgrade marked,
// logging how many when there were any.
func reverifyStored(ctx context.Context, sched *crawler.Scheduler, svc *registry.Service, log *slog.Logger) {
	start := time.Now()
	n, err := sched.ReverifyStored(ctx, svc)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Error("judging stored card versions again", "err", err.Error(), "judged", n)
	case n > 0:
		log.Info("judged stored card versions again", "versions", n, "took", time.Since(start).Round(time.Millisecond).String())
	}
}

func closeStore(store *registry.Store, log *slog.Logger) {
	if err := store.Close(); err != nil {
		log.Error("closing store", "err", err.Error())
	}
}
