package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cardexhq/cardex/api"
	"github.com/cardexhq/cardex/registry"
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

// runServe is `cardex serve`: open (and migrate) the store, serve the API
// until ctx ends (SIGINT/SIGTERM in main), then stop accepting, finish
// in-flight requests within shutdownTimeout and close the store.
func runServe(ctx context.Context, e *env, args []string) int {
	cfg, err := parseServeConfig(args, e.getenv, e.stdout, e.stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "cardex serve:", err)
		fmt.Fprintln(e.stderr, "Run 'cardex serve --help' for the settings.")
		return exitUsage
	}
	log := cfg.logger(e.stderr)
	if err := serve(ctx, cfg, log); err != nil {
		log.Error("serve failed", "err", err)
		return exitFail
	}
	return exitOK
}

func serve(ctx context.Context, cfg *serveConfig, log *slog.Logger) error {
	store, err := registry.Open(ctx, registry.OpenOptions{
		DataDir:     cfg.Store.data,
		DatabaseURL: cfg.Store.databaseURL,
		Logger:      log,
		ServerLock:  true,
	})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Error("closing store", "err", err)
		}
	}()
	svc := registry.NewService(store, registry.ServiceConfig{
		URLPolicy: registry.URLPolicy{AllowInsecureHTTP: cfg.AllowInsecureHTTP, AllowNetworks: cfg.AllowNetworks},
		Logger:    log,
		GoneAfter: cfg.GoneAfter,
	})
	handler, err := api.New(api.Config{
		Service:        svc,
		Ready:          store,
		Logger:         log,
		Limits:         cfg.limits(),
		TrustedProxies: cfg.TrustedProxies,
		BaseURL:        cfg.BaseURL,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
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
	log.Info("listening", "addr", ln.Addr().String(), "tls", tlsOn, "store", store.Dialect())
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
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("in-flight requests cut off at the shutdown deadline", "err", err)
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
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
