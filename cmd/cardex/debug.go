package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"time"
)

// checkDebugAddr accepts --debug-addr only on a loopback address: the
// profiles show the process's memory and call paths, and the listener has
// no authentication of its own (docs/operator-guide.md "Profiling").
func checkDebugAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (127.0.0.0/8 or ::1)", host)
	}
	return nil
}

// debugHandler serves Go's runtime profiles under /debug/pprof/.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// startDebug listens on --debug-addr and serves the profiles until the
// returned stop is called; with no --debug-addr it does nothing.
func startDebug(addr string, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug listener: %w", err)
	}
	// A CPU profile or trace runs as long as it is asked to (?seconds=),
	// so no write timeout.
	srv := &http.Server{Handler: debugHandler(), ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("debug listener", "err", err.Error())
		}
	}()
	log.Info("serving runtime profiles", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}, nil
}
