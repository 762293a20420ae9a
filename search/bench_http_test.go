package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkSearchHTTP100k is the HTTP load measurement of docs/benchmarks.md
// without the API server and its SQL hydration: Index.Search behind a
// net/http handler on loopback that takes q and the benchmark's filters
// from the URL and answers the Result as JSON, and 32 clients sending the
// benchmark workload for CARDEX_BENCH_HTTP_SECONDS (default 20) per round.
// "cold" has the cache off (every request computes its page and facets);
// "cached" repeats the 60 query/filter combinations with the cache on,
// each computed once before the clock starts.
func BenchmarkSearchHTTP100k(b *testing.B) {
	b.Run("cold", func(b *testing.B) { benchHTTP(b, Options{CacheEntries: -1}) })
	b.Run("cached", func(b *testing.B) { benchHTTP(b, Options{}) })
}

const benchClients = 32

func benchHTTP(b *testing.B, opts Options) {
	x := openBench(b, opts)
	srv := httptest.NewServer(searchHandler(x))
	defer srv.Close()
	secs := 20
	if n, err := strconv.Atoi(os.Getenv("CARDEX_BENCH_HTTP_SECONDS")); err == nil && n > 0 {
		secs = n
	}
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxIdleConns: benchClients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	if opts.CacheEntries >= 0 {
		// The cached round measures the steady state of popular queries:
		// every combination of the workload computed once before the clock.
		for i := range len(benchQueries) * len(benchFilters) {
			if err := get(client, srv.URL, benchQuery(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		cpu0, start := cpuTime(), time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
		var mu sync.Mutex
		var lat []time.Duration
		var failed error
		var wg sync.WaitGroup
		for c := range benchClients {
			wg.Go(func() {
				var local []time.Duration
				for i := c; ctx.Err() == nil; i += benchClients {
					t0 := time.Now()
					if err := get(client, srv.URL, benchQuery(i)); err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
						return
					}
					local = append(local, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			})
		}
		wg.Wait()
		cancel()
		if failed != nil {
			b.Fatal(failed)
		}
		wall := time.Since(start)
		slices.Sort(lat)
		b.ReportMetric(float64(len(lat))/wall.Seconds(), "req/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
		// Client and server share the process: this is the CPU of both.
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/req")
		reportRSS(b)
	}
}

// get sends q the way the API spells it and checks the answer.
func get(c *http.Client, base string, q Query) error {
	v := url.Values{"q": {q.Q}}
	add := func(name string, vals []string) {
		for _, s := range vals {
			v.Add(name, s)
		}
	}
	add("binding", q.Filters.Bindings)
	add("capability", q.Filters.Capabilities)
	add("inputMode", q.Filters.InputModes)
	add("trust", q.Filters.Trust)
	add("securityScheme", q.Filters.SecuritySchemes)
	add("protocolVersion", q.Filters.ProtocolVersions)
	resp, err := c.Get(base + "/api/v1/agents?" + v.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	// Only the status and the total are checked, without decoding the
	// page: the clients share the process, and the CPU measured should be
	// the server's as far as possible.
	_, rest, ok := bytes.Cut(body, []byte(`"totalSize":`))
	if end := bytes.IndexAny(rest, ",}"); ok && end > 0 {
		rest = rest[:end]
	}
	if n, err := strconv.Atoi(string(rest)); resp.StatusCode != http.StatusOK || err != nil || n == 0 {
		return fmt.Errorf("%s: status %d, totalSize %q", q.Q, resp.StatusCode, rest)
	}
	return nil
}

// searchHandler answers GET /api/v1/agents with Index.Search for the
// parameters get sends.
func searchHandler(x *Index) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Query()
		q := Query{Q: p.Get("q"), PageToken: p.Get("pageToken"), Filters: Filters{
			Bindings:         p["binding"],
			Capabilities:     p["capability"],
			InputModes:       p["inputMode"],
			Trust:            p["trust"],
			SecuritySchemes:  p["securityScheme"],
			ProtocolVersions: p["protocolVersion"],
		}}
		res, err := x.Search(r.Context(), q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	})
}
