package main

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/registry"
)

// The registry decorator counts every crawl result by its class, its
// verdicts by status and profile, and docs/threats.md F.64 lease conflicts,
// over a real SQLite registry.
func TestRecordingRegistryCounts(t *testing.T) {
	store, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := registry.NewService(store, registry.ServiceConfig{})
	if _, err := svc.Submit(t.Context(), registry.Anonymous, "https://metrics.example.com/.well-known/agent-card.json", ""); err != nil {
		t.Fatal(err)
	}
	m := newMetrics()
	rec := recordingRegistry{Registry: svc, batch: svc, m: m}
	now := time.Now()
	due, err := rec.ClaimDue(t.Context(), "w1", now, time.Minute, 10, 2)
	if err != nil || len(due) != 1 {
		t.Fatalf("claim: %v %v", due, err)
	}
	fail := registry.FetchResult{Attempt: registry.FetchAttempt{At: now, URL: due[0].CardURL, ErrorClass: "timeout", Duration: 1500 * time.Millisecond}}
	if err := rec.RecordFetch(t.Context(), "w1", due[0].ID, fail); err != nil {
		t.Fatal(err)
	}
	// The lease went with the record: a second write is a lost lease.
	if err := rec.RecordFetch(t.Context(), "w2", due[0].ID, fail); !errors.Is(err, registry.ErrLeaseLost) {
		t.Fatalf("second record: %v", err)
	}
	if got := value(t, m.leaseConflicts); got != 1 {
		t.Fatalf("lease conflicts %v", got)
	}
	if got := value(t, m.recordErrors); got != 0 {
		t.Fatalf("record errors %v", got)
	}
	if got := value(t, m.crawlAttempts.WithLabelValues("timeout")); got != 2 {
		t.Fatalf("timeout attempts %v", got)
	}
	if got := count(m.fetchDuration); got != 1 {
		t.Fatalf("%d fetch duration series", got)
	}

	// A fetched card: its signature verdicts by status and profile, or
	// unsigned; a 304 is not_modified.
	m2 := newMetrics()
	rec2 := recordingRegistry{Registry: svc, batch: svc, m: m2}
	due, err = rec2.ClaimDue(t.Context(), "w3", now.Add(2*time.Hour), time.Minute, 10, 2)
	if err != nil || len(due) != 1 {
		t.Fatalf("claim: %v %v", due, err)
	}
	card := &agentcard.Card{Name: "Metrics Agent"}
	ok := registry.FetchResult{Attempt: registry.FetchAttempt{At: now, URL: due[0].CardURL}, Raw: []byte(`{"name":"Metrics Agent"}`), Card: card,
		Trust: registry.TrustVerified, Signatures: []registry.SignatureResult{
			{Status: "verified", Profile: "spec"}, {Status: "error"},
		}}
	if err := rec2.RecordFetch(t.Context(), "w3", due[0].ID, ok); err != nil {
		t.Fatal(err)
	}
	rec2.RecordFetch(t.Context(), "nobody", due[0].ID, registry.FetchResult{NotModified: true, Attempt: registry.FetchAttempt{At: now}})
	for _, tc := range []struct {
		labels []string
		want   float64
	}{{[]string{"verified", "spec"}, 1}, {[]string{"error", ""}, 1}, {[]string{"unsigned", ""}, 0}} {
		if got := value(t, m2.verifyResults.WithLabelValues(tc.labels...)); got != tc.want {
			t.Errorf("verify %v: %v, want %v", tc.labels, got, tc.want)
		}
	}
	if got := value(t, m2.crawlAttempts.WithLabelValues("ok")); got != 1 {
		t.Fatalf("ok attempts %v", got)
	}
	if got := value(t, m2.crawlAttempts.WithLabelValues("not_modified")); got != 1 {
		t.Fatalf("not_modified attempts %v", got)
	}
}

// HTTP observations are labelled by route template; an unmatched request
// is one series, not one per path.
func TestMetricsObserve(t *testing.T) {
	m := newMetrics()
	m.observe("/api/v1/agents/:id", 200, 3*time.Millisecond)
	m.observe("/api/v1/agents/:id", 200, 5*time.Millisecond)
	m.observe("", 404, time.Millisecond)
	m.observe("", 404, time.Millisecond)
	if got := value(t, m.httpRequests.WithLabelValues("/api/v1/agents/:id", "200")); got != 2 {
		t.Fatalf("route count %v", got)
	}
	if got := value(t, m.httpRequests.WithLabelValues("unmatched", "404")); got != 2 {
		t.Fatalf("unmatched count %v", got)
	}
	if got := count(m.httpRequests); got != 2 {
		t.Fatalf("%d request series", got)
	}
}

// value reads a collector of one counter or gauge.
func value(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	c.Collect(ch)
	close(ch)
	var (
		n int
		v float64
	)
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		n++
		switch {
		case d.Counter != nil:
			v = d.Counter.GetValue()
		case d.Gauge != nil:
			v = d.Gauge.GetValue()
		}
	}
	if n != 1 {
		t.Fatalf("%d metrics collected, want 1", n)
	}
	return v
}

// count is the number of series a collector has.
func count(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

// The scheduler's batched writes go through the wrapper (a wrapper without
// RecordFetches would silently turn batching off): each result of a batch
// is counted with its own outcome.
func TestRecordingRegistryKeepsBatches(t *testing.T) {
	store, err := registry.Open(t.Context(), registry.OpenOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := registry.NewService(store, registry.ServiceConfig{})
	for _, u := range []string{"https://one.example.com/", "https://two.example.com/"} {
		if _, err := svc.Submit(t.Context(), registry.Anonymous, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	m := newMetrics()
	rec := recordingRegistry{Registry: svc, batch: svc, m: m}
	now := time.Now()
	due, err := rec.ClaimDue(t.Context(), "w1", now, time.Minute, 10, 2)
	if err != nil || len(due) != 2 {
		t.Fatalf("claim: %v %v", due, err)
	}
	fail := func(class string) registry.FetchResult {
		return registry.FetchResult{Attempt: registry.FetchAttempt{At: now, ErrorClass: class}, NextFetchAt: now.Add(time.Hour)}
	}
	batch := []registry.AgentFetch{{AgentID: due[0].ID, Result: fail("timeout")}, {AgentID: due[1].ID, Result: fail("dns")}}
	errs, err := rec.RecordFetches(t.Context(), "w1", batch)
	if err != nil || len(errs) != 2 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("RecordFetches: %v %v", errs, err)
	}
	// Written again by someone who holds no lease: both are conflicts.
	errs, err = rec.RecordFetches(t.Context(), "w2", batch)
	if err != nil || !errors.Is(errs[0], registry.ErrLeaseLost) || !errors.Is(errs[1], registry.ErrLeaseLost) {
		t.Fatalf("second batch: %v %v", errs, err)
	}
	if got := value(t, m.leaseConflicts); got != 2 {
		t.Fatalf("lease conflicts %v, want 2", got)
	}
	if got := value(t, m.crawlAttempts.WithLabelValues("timeout")) + value(t, m.crawlAttempts.WithLabelValues("dns")); got != 4 {
		t.Fatalf("attempts %v, want 4", got)
	}
}

// Probes are counted by outcome and binding (unknown bindings share one
// label value, so a card cannot grow the series); the duration histogram
// has one series per outcome from the start.
func TestObserveProbe(t *testing.T) {
	m := newMetrics()
	if got := count(m.probeDuration); got != len(registry.ProbeOutcomes) {
		t.Fatalf("%d duration series before any probe, want %d", got, len(registry.ProbeOutcomes))
	}
	m.observeProbe(registry.ProbeResult{Outcome: registry.OutcomeAnswering, Binding: "jsonrpc", Latency: 30 * time.Millisecond})
	m.observeProbe(registry.ProbeResult{Outcome: registry.OutcomeAnswering, Binding: "JSONRPC", Latency: 10 * time.Millisecond})
	m.observeProbe(registry.ProbeResult{Outcome: registry.OutcomeUnreachable, Binding: "urn:custom:binding", Latency: time.Second})
	if got := value(t, m.probes.WithLabelValues(registry.OutcomeAnswering, "JSONRPC")); got != 2 {
		t.Errorf("answering JSONRPC probes %v", got)
	}
	if got := value(t, m.probes.WithLabelValues(registry.OutcomeUnreachable, "other")); got != 1 {
		t.Errorf("unreachable probes of other bindings %v", got)
	}
	if got := count(m.probes); got != 2 {
		t.Errorf("%d probe counter series, want 2", got)
	}
}

// /metrics names the running build in cardex_build_info, the series an
// operator reads to tell which release a replica runs.
func TestBuildInfoMetric(t *testing.T) {
	m := newMetrics()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	bi := buildinfo.Get()
	for _, f := range families {
		if f.GetName() != "cardex_build_info" {
			continue
		}
		if len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != 1 {
			t.Fatalf("cardex_build_info: %v", f.Metric)
		}
		labels := map[string]string{}
		for _, l := range f.Metric[0].Label {
			labels[l.GetName()] = l.GetValue()
		}
		want := map[string]string{"version": bi.Version, "commit": bi.Commit, "goversion": bi.GoVersion}
		for k, v := range want {
			if labels[k] != v {
				t.Fatalf("label %s = %q, want %q (all: %v)", k, labels[k], v, labels)
			}
		}
		return
	}
	t.Fatal("no cardex_build_info series")
}
