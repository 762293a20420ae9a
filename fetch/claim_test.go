package fetch_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/fetch"
)

// claimHost serves every claim path after hold returns, counting the
// requests in flight at once.
func claimHost(t *testing.T, hold func(r *http.Request)) (port string, peak *atomic.Int64, total *atomic.Int64) {
	t.Helper()
	var cur atomic.Int64
	peak, total = &atomic.Int64{}, &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		total.Add(1)
		n := cur.Add(1)
		defer cur.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		hold(r)
		fmt.Fprint(w, strings.TrimPrefix(r.URL.Path, "/.well-known/cardex-claim/"))
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, peak, total
}

// docs/threats.md K.99: claim fetches to one host are capped whatever the
// spelling of its address: 127.0.0.1 and ::ffff:127.0.0.1 are one host.
func TestClaimFetchesShareTheCanonicalHostCap(t *testing.T) {
	port, peak, total := claimHost(t, func(*http.Request) { time.Sleep(30 * time.Millisecond) }) // a slow host
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy(), ClaimsPerHost: 1})
	var wg sync.WaitGroup
	for i := range 6 {
		host := "127.0.0.1"
		if i%2 == 1 {
			host = "[::ffff:127.0.0.1]"
		}
		wg.Go(func() {
			body, err := f.FetchClaim(t.Context(), fmt.Sprintf("http://%s:%s/.well-known/cardex-claim/t%d", host, port, i))
			if err != nil || string(body) != fmt.Sprintf("t%d", i) {
				t.Errorf("claim %d: %q %v", i, body, err)
			}
		})
	}
	wg.Wait()
	if total.Load() != 6 || peak.Load() != 1 {
		t.Fatalf("%d requests, %d at once; want 6, one at a time", total.Load(), peak.Load())
	}
}

// A claim fetch still waiting for its host's slot after ClaimWait is not
// sent: *HostBusyError, with the wait to retry after; the fetch holding
// the slot is not disturbed.
func TestClaimFetchWaitsAtMostClaimWait(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 3)
	port, _, total := claimHost(t, func(r *http.Request) {
		started <- struct{}{}
		<-release
	})
	const wait = 100 * time.Millisecond
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy(), ClaimsPerHost: 1, ClaimWait: wait})
	url := func(i int) string { return fmt.Sprintf("http://127.0.0.1:%s/.well-known/cardex-claim/t%d", port, i) }
	held := make(chan error, 1)
	go func() {
		_, err := f.FetchClaim(t.Context(), url(0))
		held <- err
	}()
	<-started
	for i := 1; i <= 2; i++ {
		_, err := f.FetchClaim(t.Context(), url(i))
		var busy *fetch.HostBusyError
		if !errors.As(err, &busy) || busy.Host != "127.0.0.1" || busy.RetryAfter() != wait {
			t.Fatalf("claim %d while the slot is held: %v", i, err)
		}
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the held fetch: %v", err)
	}
	if n := total.Load(); n != 1 {
		t.Fatalf("the host got %d requests, want 1", n)
	}
}
