package main

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/pace"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// metrics is the server's Prometheus registry. It is its own registry, not
// the global default, so nothing a dependency registers leaks into
// /metrics and tests can run several servers in one process.
type metrics struct {
	reg *prometheus.Registry

	crawlAttempts  *prometheus.CounterVec   // by result: ok, not_modified or a docs/security.md "Network policy" error class
	fetchDuration  *prometheus.HistogramVec // by result
	verifyResults  *prometheus.CounterVec   // by status and profile
	leaseConflicts prometheus.Counter
	recordErrors   prometheus.Counter
	httpRequests   *prometheus.CounterVec   // by route template and status
	httpDuration   *prometheus.HistogramVec // by route template
	probes         *prometheus.CounterVec   // liveness probes by outcome
	probeDuration  *prometheus.HistogramVec // by outcome
}

// Buckets of the fetch histogram: loopback answers take a millisecond,
// the policy cuts a fetch at 10 s (docs/security.md "Network policy").
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
			Help: "Crawl results dropped because the agent's lease was lost (removed or taken over meanwhile).",
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
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cardex_probes_total",
		Help: "Liveness probes of agent interfaces, by outcome (answering, auth_required, nonconformant, unreachable, rate_limited) and binding.",
	}, []string{"outcome", "binding"})
	m.probeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cardex_probe_duration_seconds",
		Help:    "Time of one liveness probe of one interface, by outcome.",
		Buckets: fetchBuckets,
	}, []string{"outcome"})
	for _, o := range registry.ProbeOutcomes {
		m.probeDuration.WithLabelValues(o)
	}
	bi := buildinfo.Get()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "cardex_build_info",
		Help:        "Always 1; its labels name the running build: module version, source commit and Go toolchain.",
		ConstLabels: prometheus.Labels{"version": bi.Version, "commit": bi.Commit, "goversion": bi.GoVersion},
	})
	build.Set(1)
	m.reg.MustRegister(m.crawlAttempts, m.fetchDuration, m.verifyResults, m.leaseConflicts, m.recordErrors,
		m.httpRequests, m.httpDuration, m.probes, m.probeDuration, build,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeProbe counts one liveness probe (prober.Config.Observe).
func (m *metrics) observeProbe(r registry.ProbeResult) {
	b := strings.ToUpper(r.Binding)
	switch b {
	case "JSONRPC", "HTTP+JSON", "GRPC":
	default:
		b = "other" // bounded label values
	}
	m.probes.WithLabelValues(r.Outcome, b).Inc()
	m.probeDuration.WithLabelValues(r.Outcome).Observe(r.Latency.Seconds())
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

// gauges registers the values read at scrape time: the scheduler's queue,
// the crawl backlog, the search index's lag and size, and the SQL pools.
func (m *metrics) gauges(sched *crawler.Scheduler, idx *searchRuntime, svc *registry.Service, store *registry.Store) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_crawl_due_backlog",
			Help: "Agents due for a fetch now and not leased, across all replicas (-1 when the count failed).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := svc.CountDue(ctx, time.Now())
			if err != nil {
				return -1
			}
			return float64(n)
		}),
		newPoolCollector(store),
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
			Help: "Change-log entries the search index was behind after the indexer's last batch (counts down while a backlog is applied).",
		}, func() float64 { return float64(idx.Lag()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_index_size_bytes",
			Help: "Size of the search index on disk, every generation included.",
		}, func() float64 { return float64(idx.SizeBytes()) }),
	)
	// The index's shape: what every relevance query walks (search/README.md).
	for _, g := range []struct {
		name, help string
		of         func(search.SegmentStats) uint64
	}{
		{"cardex_index_segments", "Segments of the live search index; every relevance query walks each one (-1 when not ready).",
			func(st search.SegmentStats) uint64 { return uint64(st.Segments) }},
		{"cardex_index_deleted_documents", "Document slots of the live search index holding a deleted or rewritten agent, until a merge drops them (-1 when not ready).",
			func(st search.SegmentStats) uint64 { return st.Deleted }},
		{"cardex_index_compaction_due", "1 while the live search index's segments are worth merging into one (deleted slots or segment count past their limits; the indexer merges them once changes quiet down), else 0 (-1 when not ready).",
			func(st search.SegmentStats) uint64 {
				if st.CompactionDue {
					return 1
				}
				return 0
			}},
	} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help}, func() float64 {
			st, err := idx.idx.Segments()
			if err != nil {
				return -1
			}
			return float64(g.of(st))
		}))
	}
}

// paceGauges registers the gate between interactive and background work
// (package pace; docs/operator-guide.md "CPU").
func (m *metrics) paceGauges(g *pace.Gate) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_interactive_in_flight",
			Help: "Interactive requests (reads and discovery queries) being served now; background work yields to them.",
		}, func() float64 { return float64(g.Stats().InFlight) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_writes_in_flight",
			Help: "Writes people wait for (submissions, approvals, claims) being served now; the search indexer yields to them.",
		}, func() float64 { return float64(g.Stats().Writes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cardex_background_wait_seconds_total",
			Help: "Time background work (index batches, crawl and probe writes) waited for interactive requests.",
		}, func() float64 { return g.Stats().Waited.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cardex_background_busy_seconds_total",
			Help: "Time background work ran while interactive requests (or, for the indexer, writes) were served: what the gate charges against its share.",
		}, func() float64 { return g.Stats().Charged.Seconds() }),
	)
}

// probeGauges registers the prober's pace and the probe schedule's sizes
// from its last count of the agents (at most a minute old; no query at
// scrape time): docs/liveness.md "Pacing".
func (m *metrics) probeGauges(p *prober.Prober) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_probe_rate_per_second",
			Help: "The most agents whose probe rounds this server starts per second: the larger of --probe-rate-floor and the approved agents over 0.8 × --probe-interval.",
		}, func() float64 { return p.Pace().Rate }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_probe_agents",
			Help: "Approved agents, across all replicas, at the prober's last count (at most a minute old).",
		}, func() float64 { return float64(p.Pace().Counts.Probeable) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_probe_due_backlog",
			Help: "Approved agents due for a probe (never probed, or their next probe time passed), across all replicas, at the prober's last count.",
		}, func() float64 { return float64(p.Pace().Counts.Due) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cardex_probe_never_probed",
			Help: "Approved agents never probed, across all replicas, at the prober's last count.",
		}, func() float64 { return float64(p.Pace().Counts.NeverProbed) }),
	)
}

// poolCollector exports the store's connection pools (database/sql
// statistics of the writer and the read pool) at scrape time.
type poolCollector struct {
	store                              *registry.Store
	open, inUse, idle, waits, waitSecs *prometheus.Desc
}

func newPoolCollector(store *registry.Store) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("cardex_sql_"+name, help, []string{"pool"}, nil)
	}
	return &poolCollector{store: store,
		open:     d("open_connections", "Open connections of the SQL pool (write: SQLite's one writer, or the PostgreSQL pool; read: the read pool)."),
		inUse:    d("in_use_connections", "Connections in use."),
		idle:     d("idle_connections", "Idle connections."),
		waits:    d("wait_count_total", "Times a caller waited for a connection."),
		waitSecs: d("wait_duration_seconds_total", "Time spent waiting for a connection."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.open, c.inUse, c.idle, c.waits, c.waitSecs} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.store.DBStats()
	for pool, s := range map[string]sql.DBStats{"write": st.Write, "read": st.Read} {
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.OpenConnections), pool)
		ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse), pool)
		ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.Idle), pool)
		ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(s.WaitCount), pool)
		ch <- prometheus.MustNewConstMetric(c.waitSecs, prometheus.CounterValue, s.WaitDuration.Seconds(), pool)
	}
}

// The wrapper must keep the scheduler's batched writes.
var _ crawler.BatchRegistry = recordingRegistry{}

// recordingRegistry is the scheduler's crawler.Registry with metrics: every
// crawl result passes through RecordFetch with its error class, so the
// crawler and verifier are instrumented without touching their packages.
type recordingRegistry struct {
	crawler.Registry
	batch crawler.BatchRegistry
	m     *metrics
}

func (r recordingRegistry) RecordFetch(ctx context.Context, owner, agentID string, res registry.FetchResult) error {
	err := r.Registry.RecordFetch(ctx, owner, agentID, res)
	r.count(ctx, res, err)
	return err
}

// RecordFetches keeps the scheduler's batched writes (crawler.BatchRegistry):
// without it the wrapper would fall back to one transaction per result.
func (r recordingRegistry) RecordFetches(ctx context.Context, owner string, batch []registry.AgentFetch) ([]error, error) {
	errs, err := r.batch.RecordFetches(ctx, owner, batch)
	for i, f := range batch {
		e := err
		if e == nil && i < len(errs) {
			e = errs[i]
		}
		r.count(ctx, f.Result, e)
	}
	return errs, err
}

// count records one crawl result with the registry's answer to it.
func (r recordingRegistry) count(ctx context.Context, res registry.FetchResult, err error) {
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
}
