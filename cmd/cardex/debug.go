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
	"runtime"
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
// returned stop is called; with no --debug-addr it does nothing (nil
// address).
func startDebug(addr string, log *slog.Logger) (bound net.Addr, stop func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("debug listener: %w", err)
	}
	// Sample where goroutines wait (one event per 100 µs blocked) and
	// which mutexes they wait for (1 in 100): the block and mutex
	// profiles show a contended resource, such as SQLite's one write
	// connection, that a CPU profile cannot. Both cost little at these
	// rates and stay off without --debug-addr.
	runtime.SetBlockProfileRate(int((100 * time.Microsecond).Nanoseconds()))
	runtime.SetMutexProfileFraction(100)
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
	return ln.Addr(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}, nil
}
