package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// errNotSettled: the goroutines did not come down within -settle; the
// report then carries the last sample and fails on it.
var errNotSettled = errors.New("goroutines did not settle")

// errNoMetric: /metrics lacks a series the report needs.
var errNoMetric = errors.New("metric missing from /metrics")

// sample is what the report reads from the server's /metrics.
type sample struct {
	goroutines float64 // go_goroutines
	rss        float64 // process_resident_memory_bytes
}

type scraper struct {
	http *http.Client
	url  string
}

// sample reads /metrics once (Prometheus text format: "name value" lines
// for these unlabelled gauges).
func (s *scraper) sample(ctx context.Context) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return sample{}, err
	}
	res, err := s.http.Do(req)
	if err != nil {
		return sample{}, fmt.Errorf("read /metrics: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("read /metrics: status %d", res.StatusCode)
	}
	found := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || (name != "go_goroutines" && name != "process_resident_memory_bytes") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return sample{}, fmt.Errorf("read /metrics: %s %q: %w", name, val, err)
		}
		found[name] = v
	}
	if err := sc.Err(); err != nil {
		return sample{}, fmt.Errorf("read /metrics: %w", err)
	}
	g, okG := found["go_goroutines"]
	m, okM := found["process_resident_memory_bytes"]
	if !okG || !okM {
		return sample{}, fmt.Errorf("%w: need go_goroutines and process_resident_memory_bytes", errNoMetric)
	}
	return sample{goroutines: g, rss: m}, nil
}

// settle samples every 250 ms until goroutines ≤ limit or d has passed,
// and returns the last sample (with errNotSettled when over the limit).
func (s *scraper) settle(ctx context.Context, limit float64, d time.Duration) (sample, error) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		sm, err := s.sample(ctx)
		if err != nil {
			return sm, err
		}
		if sm.goroutines <= limit {
			return sm, nil
		}
		if time.Now().After(deadline) {
			return sm, errNotSettled
		}
		select {
		case <-ctx.Done():
			return sm, ctx.Err()
		case <-tick.C:
		}
	}
}
