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
	"syscall"
	"time"

	"github.com/cardexhq/cardex/api"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/pace"
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
	s, err := wire(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	_, stopDebug, err := startDebug(cfg.DebugAddr, log)
	if err != nil {
		return err
	}
	defer stopDebug()
	ln, err := cfg.listen(log)
	if err != nil {
		return err
	}
	tlsOn := cfg.TLSCert != ""
	if err := cfg.announce(ln.Addr(), s.store.Dialect(), log); err != nil {
		ln.Close()
		return err
	}
	srv := newHTTPServer(s.handler, log)
	served := make(chan error, 1)
	go func() {
		if tlsOn {
			served <- srv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	s.start()
	stopSeed := s.seed(ctx, stdout, browseURL(ln.Addr(), tlsOn))

	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownTimeout)
	if serveErr == nil {
		serveErr = shutdownHTTP(ctx, srv, served, log)
	}
	stopSeed()
	s.stop(ctx)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serveErr)
	}
	log.Info("stopped")
	return nil
}

// listen listens on --addr. A demo started without --addr whose default
// port another demo (or anything else) has takes a free one and says
// where.
func (c *serveConfig) listen(log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil && c.Demo && !c.addrSet && errors.Is(err, syscall.EADDRINUSE) {
		log.Info("demo: the default address is in use, listening on a free port", "addr", c.Addr)
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

// announce logs where the server listens, warns when admin sign-in cannot
// work there, and writes --addr-file.
func (c *serveConfig) announce(addr net.Addr, dialect string, log *slog.Logger) error {
	tlsOn := c.TLSCert != ""
	log.Info("listening", "addr", addr.String(), "tls", tlsOn, "store", dialect, "demo", c.Demo,
		"gomaxprocs", runtime.GOMAXPROCS(0))
	if !tlsOn && !strings.HasPrefix(c.BaseURL, "https://") && !loopbackOnly(addr) {
		// docs/security.md: the admin cookie is a Secure __Host- cookie,
		// which browsers keep over plain HTTP only on loopback.
		log.Warn("admin sign-in in the web UI needs TLS: set --tls-cert/--tls-key, or --base-url https://… behind a TLS-terminating proxy; API tokens work regardless")
	}
	if c.AddrFile != "" {
		return writeAddrFile(c.AddrFile, addr.String())
	}
	return nil
}

// newHTTPServer is the server's http.Server over h, with the timeouts
// above.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
}

// shutdownHTTP stops accepting and lets in-flight requests finish for up
// to shutdownTimeout, then cuts them off; it returns what the serving
// goroutine returned.
func shutdownHTTP(ctx context.Context, srv *http.Server, served <-chan error, log *slog.Logger) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("in-flight requests cut off at the shutdown deadline", "err", err.Error())
		srv.Close()
	}
	return <-served
}

// handler builds the API and the web UI over svc and composes them with
// /metrics into the server's one handler.
func (c *serveConfig) handler(svc *registry.Service, ready api.Readiness, sr *searchRuntime, kick func(), m *metrics, g *pace.Gate, log *slog.Logger) (http.Handler, error) {
	// One set of buckets for both faces: a client has one budget.
	limits := ratelimit.NewLimiters(c.limits(), 0)
	c.limiters = limits // the scheduled catalog crawl spends the domains' budgets too
	var idp *identity.Provider
	var bearer func(ctx context.Context, token string) (registry.Principal, error)
	if c.oidc != nil {
		cfg := *c.oidc
		cfg.Log = log
		var err error
		if idp, err = identity.New(cfg); err != nil {
			return nil, err
		}
		if idp.BearerEnabled() {
			bearer = idp.Bearer
		}
	}
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
		Bearer:         bearer,
		ARD:            api.ARDConfig{Peers: c.ARDPeers, Call: c.ardCall},
	})
	if err != nil {
		return nil, err
	}
	webH, err := web.New(web.Config{
		Service:        svc,
		Index:          sr.Index(),
		Logger:         log,
		Observe:        m.observe,
		BaseURL:        c.BaseURL,
		Demo:           c.Demo,
		Limiters:       limits,
		TrustedProxies: c.TrustedProxies,
		Kick:           kick,
		OpenAPI:        api.OpenAPI,
		OIDC:           idp,
		Federate:       c.webFederate(),
	})
	if err != nil {
		return nil, err
	}
	surfaces, err := c.discoverySurfaces(svc, sr.Searcher(), c.gate(svc, limits, bearer), log)
	if err != nil {
		return nil, err
	}
	for i := range surfaces {
		surfaces[i].handler = routeLog(surfaces[i].route, surfaces[i].handler, log, m.observe)
	}
	return interactive(g, compose(apiH, webH, m.handler(), surfaces...), surfaces), nil
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
