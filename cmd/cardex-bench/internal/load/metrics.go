package load

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
)

// errNotSettled: the goroutines did not come down within -settle; the
// report then carries the last sample and fails on it.
var errNotSettled = errors.New("goroutines did not settle")

// sample is what the report reads from the server's /metrics.
type sample struct {
	goroutines float64 // go_goroutines
	rss        float64 // process_resident_memory_bytes
}

type scraper struct {
	http *http.Client
	url  string
}

// sample reads the two gauges from /metrics once.
func (s *scraper) sample(ctx context.Context) (sample, error) {
	m, err := bench.ReadMetrics(ctx, s.http, s.url, "go_goroutines", "process_resident_memory_bytes")
	if err != nil {
		return sample{}, err
	}
	return sample{goroutines: m["go_goroutines"], rss: m["process_resident_memory_bytes"]}, nil
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
