package main

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/cardexhq/cardex/pace"
)

// compose is the server's one mux (docs/design.md: one process serves the API,
// the UI and the metrics): /api/, /healthz, /readyz and /problems/ go to
// the API; /metrics to Prometheus; the discovery surfaces' paths to them
// (serve_discovery.go); everything else to the web UI.
func compose(apiH, webH, metricsH http.Handler, surfaces ...surface) http.Handler {
	mux := http.NewServeMux()
	for _, s := range surfaces {
		for _, p := range s.patterns {
			mux.Handle(p, s.handler)
		}
	}
	mux.Handle("/api/", apiH)
	mux.Handle("/ard/", apiH) // the ARD registry API (docs/discovery.md)
	mux.Handle("/healthz", apiH)
	mux.Handle("/readyz", apiH)
	mux.Handle("/problems/", apiH)
	mux.Handle("GET /metrics", metricsH)
	mux.Handle("/", webH)
	return mux
}

// interactive marks the requests people and agents wait for on g, so
// background work yields to them (package pace): as interactive, reads
// (GET and HEAD) anywhere but the probes of operators' tools (/metrics,
// /healthz, /readyz), every request to a discovery surface (A2A, MCP and
// the AI Catalog are queries whatever their method) and the ARD searches;
// as writes, the rest — submissions, approvals, claims — to which only the
// search indexer yields, since the crawler's writes are what moves a
// submission along.
func interactive(g *pace.Gate, h http.Handler, surfaces []surface) http.Handler {
	if g == nil {
		return h
	}
	query := map[string]bool{"POST /ard/search": true, "POST /ard/explore": true}
	mux := http.NewServeMux()
	for _, s := range surfaces {
		for _, p := range s.patterns {
			mux.Handle(p, h)
		}
	}
	marked, writes := g.Interactive(h), g.Writes(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics", "/healthz", "/readyz":
			h.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead || query[r.Method+" "+r.URL.Path] {
			marked.ServeHTTP(w, r)
			return
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			marked.ServeHTTP(w, r)
			return
		}
		writes.ServeHTTP(w, r)
	})
}

// routeLog logs and observes each request of a discovery surface after it
// is answered, under the surface's route label: the method, the path
// without its query string, the status and the time taken. The API and
// the web UI log their own requests with their route tables' patterns.
func routeLog(route string, next http.Handler, log *slog.Logger, observe func(route string, status int, d time.Duration)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		d := time.Since(start)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		observe(route, status, d)
		log.Info("http request", "method", r.Method, "route", route, "path", r.URL.Path,
			"status", status, "duration_ms", float64(d.Microseconds())/1000)
	})
}

// statusRecorder remembers the status a handler sent.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines) through the recorder.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
