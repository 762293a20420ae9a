package load

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
)

// fakeServer answers every API read with status and /metrics with a
// goroutine count that grows by grow per scrape.
func fakeServer(t *testing.T, status int, grow int64) *httptest.Server {
	var g atomic.Int64
	g.Store(40)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintf(w, "# TYPE go_goroutines gauge\ngo_goroutines %d\nprocess_resident_memory_bytes 1.2e+07\n", g.Add(grow))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"agents":[],"tags":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestExitsNonZeroOn5xx(t *testing.T) {
	srv := fakeServer(t, http.StatusServiceUnavailable, 0)
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"-url", srv.URL, "-write-ratio", "0", "-clients", "2", "-duration", "200ms", "-settle", "0s"}, &stdout, &stderr)
	if code != bench.ExitFail || !strings.Contains(stderr.String(), "with a 5xx status") {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
}

func TestExitsNonZeroOnTransportError(t *testing.T) {
	// Bodies that are not JSON break decoding of list and tags answers.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprint(w, "go_goroutines 10\nprocess_resident_memory_bytes 1e6\n")
			return
		}
		fmt.Fprint(w, "{")
	}))
	t.Cleanup(srv.Close)
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"-url", srv.URL, "-write-ratio", "0", "-clients", "2", "-duration", "200ms", "-settle", "0s"}, &stdout, &stderr)
	if code != bench.ExitFail || !strings.Contains(stderr.String(), "transport errors") {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
}

func TestExitsNonZeroOnGoroutineGrowth(t *testing.T) {
	srv := fakeServer(t, http.StatusOK, 100)
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"-url", srv.URL, "-write-ratio", "0", "-clients", "2", "-duration", "200ms", "-settle", "0s"}, &stdout, &stderr)
	if code != bench.ExitFail || !strings.Contains(stderr.String(), "server goroutines grew by") {
		t.Fatalf("exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "req/s") || !strings.Contains(stdout.String(), "p99 ms") {
		t.Fatalf("text report:\n%s", stdout.String())
	}
}

func TestFailsWithoutMetrics(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	var stderr bytes.Buffer
	if code := Run(t.Context(), []string{"-url", srv.URL, "-write-ratio", "0", "-duration", "100ms"}, &bytes.Buffer{}, &stderr); code != bench.ExitFail || !strings.Contains(stderr.String(), "/metrics") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
