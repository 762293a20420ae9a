package prober_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/prober"
)

// BenchmarkTarpitStall is the load run of the stall targets of
// docs/threats.md K.98 in real time on loopback (docs/benchmarks.md
// "Liveness under a tarpit"): a bystander agent probed every second, alone
// and then beside two approved cards with 120 interfaces on their own
// domain that each answer after 4 s and two curator-approved cards with
// 120 interfaces each on a victim host that also answers probes after 4 s,
// while a crawl fetches the victim's card every 500 ms through the shared
// per-host budget. It reports the bystander's probes per 10 s in both
// phases, the victim's crawl latency (the slot wait and the fetch), and how
// long after an agent's probing was turned off its last probe ended. Run it
// once: go test -run '^$' -bench TarpitStall -benchtime 1x ./prober/
func BenchmarkTarpitStall(b *testing.B) {
	for b.Loop() {
		runTarpitStall(b)
	}
}

// loopHost is one loopback address serving a delay per request, logging
// when each request started and ended and under which path.
type loopHost struct {
	srv   *httptest.Server
	delay time.Duration
	mu    sync.Mutex
	log   []loopReq
}

type loopReq struct {
	path       string
	start, end time.Time
}

func newLoopHost(b *testing.B, ip string, delay time.Duration) *loopHost {
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		b.Skipf("loopback address %s: %v", ip, err)
	}
	h := &loopHost{delay: delay}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		start := time.Now()
		select {
		case <-time.After(h.delay):
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":"cardex-probe","error":{"code":-32001,"message":"Task not found"}}`)
		h.mu.Lock()
		h.log = append(h.log, loopReq{r.URL.Path, start, time.Now()})
		h.mu.Unlock()
	}))
	h.srv.Listener.Close()
	h.srv.Listener = ln
	h.srv.Start()
	b.Cleanup(h.srv.Close)
	return h
}

func (h *loopHost) port() string { return h.srv.URL[strings.LastIndex(h.srv.URL, ":")+1:] }

// started counts requests under prefix that started in [from, to).
func (h *loopHost) started(prefix string, from, to time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.log {
		if strings.HasPrefix(r.path, prefix) && !r.start.Before(from) && r.start.Before(to) {
			n++
		}
	}
	return n
}

// lastEnd is when the last request under prefix ended.
func (h *loopHost) lastEnd(prefix string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	var t time.Time
	for _, r := range h.log {
		if strings.HasPrefix(r.path, prefix) && r.end.After(t) {
			t = r.end
		}
	}
	return t
}

// mapResolver resolves the benchmark's names to loopback addresses.
type mapResolver map[string]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func runTarpitStall(b *testing.B) {
	by := newLoopHost(b, "127.0.0.9", 0)
	tarpit := newLoopHost(b, "127.0.0.5", 4*time.Second)
	victim := newLoopHost(b, "127.0.0.7", 4*time.Second)
	card := newLoopHost(b, "127.0.0.8", 100*time.Millisecond) // the victim's card, served beside it
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	res := mapResolver{"bystander.example": netip.MustParseAddr("127.0.0.9"), "tarpit1.example": netip.MustParseAddr("127.0.0.5"),
		"tarpit2.example": netip.MustParseAddr("127.0.0.5"), "victim.example": netip.MustParseAddr("127.0.0.7")}
	f, err := fetch.New(fetch.Config{Policy: pol, Resolver: res})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	hosts := fetch.NewHostSlots(2)
	m := newMemReg()
	m.add("bystander", "bystander.example", true, rpc("http://bystander.example:"+by.port()+"/rpc"))
	p, err := prober.New(prober.Config{Registry: m, Fetcher: f, Hosts: hosts, Interval: time.Second, Tick: 200 * time.Millisecond,
		Jitter: -1, Owner: "stall-bench"})
	if err != nil {
		b.Fatal(err)
	}
	// The crawl of the victim: its card is fetched every 500 ms through
	// the shared budget, keyed on the victim's host; latency is the slot
	// wait plus the fetch.
	var crawlMu sync.Mutex
	var crawls []time.Duration
	crawlCtx, stopCrawl := context.WithCancel(b.Context())
	var crawlWG sync.WaitGroup
	crawlWG.Go(func() {
		for crawlCtx.Err() == nil {
			start := time.Now()
			release, err := hosts.Acquire(crawlCtx, "victim.example", fetch.UseCrawl)
			if err != nil {
				return
			}
			_, ferr := f.Fetch(crawlCtx, fetch.Request{URL: card.srv.URL + "/.well-known/agent-card.json", AnyStatus: true, MaxBytes: 1 << 16})
			release()
			if ferr == nil {
				crawlMu.Lock()
				crawls = append(crawls, time.Since(start))
				crawlMu.Unlock()
			}
			select {
			case <-time.After(500 * time.Millisecond):
			case <-crawlCtx.Done():
			}
		}
	})
	crawlStats := func() (n int, p50, worst time.Duration) {
		crawlMu.Lock()
		defer crawlMu.Unlock()
		d := slices.Clone(crawls)
		crawls = crawls[:0]
		slices.Sort(d)
		if len(d) == 0 {
			return 0, 0, 0
		}
		return len(d), d[len(d)/2], d[len(d)-1]
	}

	p.Start()
	const window = 10 * time.Second
	t0 := time.Now()
	time.Sleep(window)
	alone := by.started("/rpc", t0, time.Now())
	nBase, p50Base, maxBase := crawlStats()

	for i := 1; i <= 2; i++ {
		m.add(fmt.Sprintf("tarpit%d", i), fmt.Sprintf("tarpit%d.example", i), true,
			rpcs(120, fmt.Sprintf("http://tarpit%d.example:%s/t%d/%%d", i, tarpit.port(), i))...)
		m.add(fmt.Sprintf("pointer%d", i), fmt.Sprintf("pointer%d.example", i), true,
			rpcs(120, fmt.Sprintf("http://victim.example:%s/v%d/%%d", victim.port(), i))...)
	}
	time.Sleep(15 * time.Second)
	crawlStats() // the warm-up's crawls are not counted
	t1 := time.Now()
	time.Sleep(window)
	with := by.started("/rpc", t1, time.Now())
	nTar, p50Tar, maxTar := crawlStats()

	// Probing off for tarpit1 while its round runs.
	m.disable("tarpit1")
	off := time.Now()
	time.Sleep(6 * time.Second)
	stopped := tarpit.lastEnd("/t1/").Sub(off)
	startedAfter := tarpit.started("/t1/", off, time.Now())

	stopCrawl()
	crawlWG.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	p.Shutdown(ctx)
	cancel()
	b.ReportMetric(float64(alone), "bystander-alone/10s")
	b.ReportMetric(float64(with), "bystander-tarpits/10s")
	b.ReportMetric(float64(maxBase.Milliseconds()), "crawl-max-alone-ms")
	b.ReportMetric(float64(maxTar.Milliseconds()), "crawl-max-tarpits-ms")
	b.ReportMetric(float64(max(stopped, 0).Milliseconds()), "stop-after-off-ms")
	b.Logf("bystander probes per 10 s: %d alone, %d beside the tarpits", alone, with)
	b.Logf("victim crawls: %d alone (p50 %v, max %v), %d beside the probes (p50 %v, max %v)", nBase, p50Base, maxBase, nTar, p50Tar, maxTar)
	b.Logf("probing off: the agent's last probe ended %v later, %d probes started after", stopped.Round(time.Millisecond), startedAfter)
	b.Logf("tarpit: %d requests, victim: %d requests in the run; %d lost, %d late, %d re-claimed rounds", len(tarpit.log), len(victim.log), m.lost, m.late, m.reclaimed)
}
