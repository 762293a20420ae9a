package main

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/registry"
)

// metrics is the server's Prometheus registry. It is its own registry, not
// the global default, so nothing a dependency registers leaks into
// /metrics and tests can run several servers in one process.
type metrics struct {
	reg *prometheus.Registry

	crawlAttempts  *prometheus.CounterVec   // by result: ok, not_modified or a CONTRACT.md §2 error class
	fetchDuration  *prometheus.HistogramVec // by result
	verifyResults  *prometheus.CounterVec   // by status and profile
	leaseConflicts prometheus.Counter
	recordErrors   prometheus.Counter
	httpRequests   *prometheus.CounterVec   // by route template and status
	httpDuration   *prometheus.HistogramVec // by route template
}

// Buckets of the fetch histogram: loopback answers take a millisecond,
// the policy cuts a fetch at 10 s (CONTRACT.md §2).
var fetchBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		crawlAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardex_crawl_attempts_total",
			Help: "Crawl results recorded, by result: ok, not_modified or the fetch error class.",
		}, []string{"result"}),
		fetchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cardex_crawl_fetch_duration_seconds",
			Help:    "Time of one crawl (every request, parse and verify), by result.",
			Buckets: fetchBuckets,
		}, []string{"result"}),
		verifyResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardex_verify_results_total",
			Help: "Signature verdicts of fetched cards, by status (verified, invalid, untrusted, error; unsigned for a card without signatures) and canonicalization profile.",
		}, []string{"status", "profile"}),
		leaseConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cardex_crawl_lease_conflicts_total",
			Help: "Crawl results dropped because the agent's lease was lost (removed or taken over meanwhile, RELIABILITY.md F.64).",
		}),
		recordErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cardex_crawl_record_errors_total",
			Help: "Crawl results the registry failed to record for a reason other than a lost lease.",
		}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardex_http_requests_total",
			Help: "HTTP requests answered, by route template and status.",
		}, []string{"route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cardex_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route template.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	m.reg.MustRegister(m.crawlAttempts, m.fetchDuration, m.verifyResults, m.leaseConflicts, m.recordErrors,
		m.httpRequests, m.httpDuration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the registry in the text exposition format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// observe counts one HTTP request; it is api.Config.Observe and the web
// access log's hook. An unmatched request has route "" and is counted as
// "unmatched", so scanners probing random paths cannot grow the series.
func (m *metrics) observe(route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
}

// gauges registers the values read at scrape time: the scheduler's queue
// and the search index's lag and size.
func (m *metrics) gauges(sched *crawler.Scheduler, idx *searchRuntime) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_crawl_in_flight",
			Help: "Agents claimed by this server's crawler and not yet finished (running or queued for a worker).",
		}, func() float64 { return float64(sched.Stats().InFlight) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cardex_crawl_claimed_total",
			Help: "Agents claimed by this server's crawler.",
		}, func() float64 { return float64(sched.Stats().Claimed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cardex_crawl_lease_expired_total",
			Help: "Claimed agents skipped because their lease ran out while queued.",
		}, func() float64 { return float64(sched.Stats().Expired) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_index_lag_changes",
			Help: "Change-log entries the search index was behind after the indexer's last round.",
		}, func() float64 { return float64(idx.Lag()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_index_size_bytes",
			Help: "Size of the search index on disk, every generation included.",
		}, func() float64 { return float64(idx.SizeBytes()) }),
	)
}

// recordingRegistry is the scheduler's crawler.Registry with metrics: every
// crawl result passes through RecordFetch with its error class, so the
// crawler and verifier are instrumented without touching their packages.
type recordingRegistry struct {
	crawler.Registry
	m *metrics
}

func (r recordingRegistry) RecordFetch(ctx context.Context, owner, agentID string, res registry.FetchResult) error {
	err := r.Registry.RecordFetch(ctx, owner, agentID, res)
	switch {
	case errors.Is(err, registry.ErrLeaseLost):
		r.m.leaseConflicts.Inc()
	case err != nil && ctx.Err() == nil:
		r.m.recordErrors.Inc()
	}
	result := res.Attempt.ErrorClass
	switch {
	case result != "":
	case res.NotModified:
		result = "not_modified"
	default:
		result = "ok"
	}
	r.m.crawlAttempts.WithLabelValues(result).Inc()
	r.m.fetchDuration.WithLabelValues(result).Observe(res.Attempt.Duration.Seconds())
	if res.Card != nil {
		if len(res.Signatures) == 0 {
			r.m.verifyResults.WithLabelValues("unsigned", "").Inc()
		}
		for _, s := range res.Signatures {
			r.m.verifyResults.WithLabelValues(s.Status, s.Profile).Inc()
		}
	}
	return err
}
