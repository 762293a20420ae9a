package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
)

var admin = registry.Principal{Role: registry.RoleAdmin, Name: "test-admin"}

// clock is the one fake clock a test's registry, scheduler and key-set
// cache share, so "two hours later" means the same to all three.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// stack is a registry service and a scheduler over one store, on one clock.
type stack struct {
	svc   *registry.Service
	sched *crawler.Scheduler
	clk   *clock
	// cat crawls catalogs with the stack's fetcher (the periodic crawl
	// and SubmitCatalog use it alike).
	cat crawler.CatalogCrawler
	// want is how many crawls the test has asked for so far: the
	// scheduler's first claim at Start may race ahead of crawl().
	want int64
}

type stackOptions struct {
	policy   *fetch.Policy // default loopbackPolicy()
	clk      *clock
	owner    string
	workers  int
	cacheTTL time.Duration // verifier key-set cache (default 10 min)
	resolver fetch.Resolver
}

// newStack builds a registry service that accepts loopback submissions
// (the fleet's URLs) and a started scheduler whose fetcher runs under
// o.policy. The scheduler ticks hourly: tests Kick it.
func newStack(t testing.TB, store *registry.Store, o stackOptions) *stack {
	t.Helper()
	if o.clk == nil {
		o.clk = newClock()
	}
	pol := loopbackPolicy()
	if o.policy != nil {
		pol = *o.policy
	}
	pol.Timeout = 5 * time.Second
	f := newFetcher(t, fetch.Config{Policy: pol, Resolver: o.resolver})
	svc := registry.NewService(store, registry.ServiceConfig{
		Now: o.clk.Now,
		URLPolicy: registry.URLPolicy{AllowInsecureHTTP: true,
			AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		CatalogCrawler: crawler.CatalogCrawler{Fetcher: f},
	})
	v := verifier.New(verifier.Config{Fetcher: f, Now: o.clk.Now, CacheTTL: o.cacheTTL})
	s, err := crawler.NewScheduler(crawler.SchedulerConfig{
		Registry: svc, Fetcher: f, Verifier: v, Now: o.clk.Now, Rand: func() float64 { return 0.5 },
		Owner: o.owner, Tick: time.Hour, Workers: o.workers,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &stack{svc: svc, sched: s, clk: o.clk, cat: crawler.CatalogCrawler{Fetcher: f}}
}

// submit registers url anonymously and returns the agent id.
func (st *stack) submit(t testing.TB, url string) string {
	t.Helper()
	a, err := st.svc.Submit(t.Context(), registry.Anonymous, url, "")
	if err != nil {
		t.Fatalf("submit %s: %v", url, err)
	}
	return a.ID
}

// crawl kicks the scheduler and waits until n more results are settled
// (recorded or dropped), polling with a deadline.
func (st *stack) crawl(t testing.TB, n int64) {
	t.Helper()
	st.want += n
	st.sched.Kick()
	polltest.Until(t, func() string {
		return "the scheduler to settle " + itoa(st.want) + " crawls (settled " + itoa(st.settled()) + ")"
	}, 15*time.Second, func() bool { return st.settled() >= st.want })
}

// quiet kicks the scheduler and waits for a claim to run and find nothing
// to do: "nothing is due" made observable.
func (st *stack) quiet(t testing.TB) {
	t.Helper()
	before := st.sched.Stats().ClaimRuns
	st.sched.Kick()
	polltest.Until(t, "a claim run", 10*time.Second, func() bool { return st.sched.Stats().ClaimRuns > before })
	if s := st.sched.Stats(); s.Claimed != st.want || s.InFlight != 0 {
		t.Fatalf("scheduler claimed %d agents (%d in flight), the test expected %d", s.Claimed, s.InFlight, st.want)
	}
}

func (st *stack) settled() int64 {
	s := st.sched.Stats()
	return s.Recorded + s.LeaseLost + s.RecordErrors
}

// later advances the clock past any schedule and crawls n due agents.
func (st *stack) later(t testing.TB, d time.Duration, n int64) {
	t.Helper()
	st.clk.Advance(d)
	st.crawl(t, n)
}

func (st *stack) get(t testing.TB, id string) *registry.Agent {
	t.Helper()
	a, err := st.svc.Get(t.Context(), admin, id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return a
}

func (st *stack) lastFetch(t testing.TB, id string) registry.FetchAttempt {
	t.Helper()
	f, err := st.svc.Fetches(t.Context(), admin, id, 1)
	if err != nil || len(f) == 0 {
		t.Fatalf("fetches of %s: %v (%d)", id, err, len(f))
	}
	return f[0]
}

func (st *stack) versions(t testing.TB, id string) []registry.Version {
	t.Helper()
	v, err := st.svc.Versions(t.Context(), admin, id)
	if err != nil {
		t.Fatalf("versions of %s: %v", id, err)
	}
	return v
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// mutableAgent is one loopback agent whose answer a test changes between
// crawls (the fleet's behaviours are fixed per agent): a status, headers
// and a body, plus a key set at /.well-known/jwks.json.
type mutableAgent struct {
	srv  *httptest.Server
	mu   sync.Mutex
	resp func(w http.ResponseWriter, r *http.Request)
	jwks []byte
	reqs atomic.Int64
	keys atomic.Int64  // key set requests
	gate chan struct{} // when set, card requests wait for it
}

func newMutableAgent(t testing.TB) *mutableAgent {
	m := &mutableAgent{}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *mutableAgent) URL() string    { return m.srv.URL + "/.well-known/agent-card.json" }
func (m *mutableAgent) Origin() string { return m.srv.URL }

func (m *mutableAgent) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	resp, jwks, gate := m.resp, m.jwks, m.gate
	m.mu.Unlock()
	if r.URL.Path == "/.well-known/jwks.json" {
		m.keys.Add(1)
		if jwks == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(jwks)
		return
	}
	m.reqs.Add(1)
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	if resp == nil {
		http.NotFound(w, r)
		return
	}
	resp(w, r)
}

// card serves body as application/json with status 200.
func (m *mutableAgent) card(body []byte) {
	m.set(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

// status serves code with extra headers and a small JSON body.
func (m *mutableAgent) status(code int, kv ...string) {
	m.set(func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write([]byte(`{"error":"x"}`))
	})
}

func (m *mutableAgent) set(f func(w http.ResponseWriter, r *http.Request)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resp = f
}

func (m *mutableAgent) setJWKS(b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jwks = b
}

func (m *mutableAgent) hold() chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gate = make(chan struct{})
	return m.gate
}
