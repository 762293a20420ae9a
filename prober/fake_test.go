package prober_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/registry"
)

// The scheduling tests run in fake time (testing/synctest): the registry
// is memReg below (registry.Service runs over SQLite, whose goroutines
// cannot live in a bubble; the SQLite and PostgreSQL tests cover the real
// one) and the network is pipeNet, in-memory connections to fake A2A
// endpoints, dialed through the crawler's real fetcher and address policy.

// memReg is a probe queue with leases, following registry.ClaimProbes:
// approved agents due now, lease free or expired, at most perHost leases
// per card host. It also notes what must never happen: a round recorded
// after its lease ran out, an agent claimed again under a running round.
type memReg struct {
	mu        sync.Mutex
	agents    map[string]*memAgent
	order     []string
	recorded  map[string][]registry.ProbeRound
	late      int // rounds recorded after their lease expired
	reclaimed int // claims of an agent whose earlier lease expired unrecorded
	lost      int
	counted   int // CountProbes calls
}

type memAgent struct {
	id, host string
	ifaces   []agentcard.Interface
	curated  bool
	due      time.Time
	owner    string
	until    time.Time
	disabled bool
	failures int
}

func newMemReg() *memReg {
	return &memReg{agents: map[string]*memAgent{}, recorded: map[string][]registry.ProbeRound{}}
}

func (m *memReg) add(id, host string, curated bool, ifaces ...agentcard.Interface) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.agents[id] = &memAgent{id: id, host: host, ifaces: ifaces, curated: curated, due: time.Now()}
	m.order = append(m.order, id)
}

func (m *memReg) disable(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.agents[id].disabled, m.agents[id].owner = true, ""
}

func (m *memReg) rounds(id string) []registry.ProbeRound {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.recorded[id])
}

func (m *memReg) ClaimProbes(_ context.Context, owner string, now time.Time, ttl time.Duration, limit, perHost int) ([]registry.DueProbe, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	live := map[string]int{}
	for _, a := range m.agents {
		if a.owner != "" && a.until.After(now) {
			live[a.host]++
		}
	}
	var out []registry.DueProbe
	for _, id := range m.order {
		a := m.agents[id]
		if len(out) == limit {
			break
		}
		if a.disabled || a.due.After(now) || (a.owner != "" && a.until.After(now)) || live[a.host] >= perHost {
			continue
		}
		if a.owner != "" {
			m.reclaimed++
		}
		a.owner, a.until = owner, now.Add(ttl)
		live[a.host]++
		out = append(out, registry.DueProbe{ID: a.id, Host: a.host, Failures: a.failures, LeaseUntil: a.until,
			Interfaces: a.ifaces, CuratorApproved: a.curated})
	}
	return out, nil
}

func (m *memReg) RecordProbes(_ context.Context, owner string, rounds []registry.ProbeRound) ([]error, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	errs := make([]error, len(rounds))
	for i, r := range rounds {
		a := m.agents[r.AgentID]
		if a == nil || a.owner != owner {
			errs[i] = registry.ErrLeaseLost
			m.lost++
			continue
		}
		if time.Now().After(a.until) {
			m.late++
		}
		a.owner, a.due = "", r.Next
		m.recorded[r.AgentID] = append(m.recorded[r.AgentID], r)
	}
	return errs, nil
}

func (m *memReg) ReleaseProbeLeases(_ context.Context, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.agents {
		if a.owner == owner {
			a.owner = ""
		}
	}
	return nil
}

func (m *memReg) ProbeLeaseHeld(_ context.Context, owner, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[id]
	return a != nil && !a.disabled && a.owner == owner && a.until.After(now), nil
}

// CountProbes counts like registry.CountProbes: agents not turned off,
// those never recorded, those due at now.
func (m *memReg) CountProbes(_ context.Context, now time.Time) (registry.ProbeCounts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counted++
	var c registry.ProbeCounts
	for id, a := range m.agents {
		if a.disabled {
			continue
		}
		c.Probeable++
		if len(m.recorded[id]) == 0 {
			c.NeverProbed++
		}
		if !a.due.After(now) {
			c.Due++
		}
	}
	return c, nil
}

func (m *memReg) PruneProbes(context.Context, time.Time, time.Duration, time.Duration) (int64, error) {
	return 0, nil
}

// pipeNet is an in-memory network of fake JSON-RPC A2A endpoints, one per
// address, each answering GetTask with "task not found" after its delay.
type pipeNet struct {
	mu    sync.Mutex
	hosts map[string]*fakeHost // by "ip:port"
	names map[string]netip.Addr
}

// fakeHost is one endpoint address: its requests, the paths they named,
// and the most it ever had in flight.
type fakeHost struct {
	delay time.Duration
	ln    *chanListener
	srv   *http.Server

	mu        sync.Mutex
	cur, peak int
	starts    []time.Time
	paths     map[string]int
}

func newPipeNet() *pipeNet {
	return &pipeNet{hosts: map[string]*fakeHost{}, names: map[string]netip.Addr{}}
}

// serve starts an endpoint at addr (ip:port) answering after delay; names
// resolve to its address.
func (n *pipeNet) serve(t *testing.T, addr string, delay time.Duration, names ...string) *fakeHost {
	h := &fakeHost{delay: delay, ln: newChanListener(), paths: map[string]int{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(h.handle)}
	go h.srv.Serve(h.ln)
	t.Cleanup(func() { h.srv.Close() })
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hosts[addr] = h
	for _, name := range names {
		n.names[name] = netip.MustParseAddrPort(addr).Addr()
	}
	return h
}

func (h *fakeHost) handle(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	h.mu.Lock()
	h.cur++
	h.peak = max(h.peak, h.cur)
	h.starts = append(h.starts, time.Now())
	h.paths[r.URL.Path]++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.cur--
		h.mu.Unlock()
	}()
	select {
	case <-time.After(h.delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":"cardex-probe","error":{"code":-32001,"message":"Task not found"}}`)
}

// requests counts the requests that started in [from, to).
func (h *fakeHost) requests(from, to time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.starts {
		if !s.Before(from) && s.Before(to) {
			n++
		}
	}
	return n
}

func (h *fakeHost) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.starts)
}

func (h *fakeHost) maxInFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

func (n *pipeNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	n.mu.Lock()
	h := n.hosts[addr]
	n.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("dial %s: %w", addr, errors.New("connection refused"))
	}
	c, s := net.Pipe()
	select {
	case h.ln.conns <- s:
		return c, nil
	case <-h.ln.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (n *pipeNet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a, ok := n.names[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// chanListener hands pipeNet's server ends to an http.Server.
type chanListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// pipeFetcher is the crawler's fetcher under the production policy plus
// 127.0.0.0/8 and http, dialing pipeNet.
func pipeFetcher(t *testing.T, n *pipeNet) *fetch.Fetcher {
	t.Helper()
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	pol.AllowInsecureHTTP = true
	f, err := fetch.New(fetch.Config{Policy: pol, Resolver: n, DialContext: n.dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// syncProber is a prober over m and n with the production defaults but a
// fixed interval and no jitter, on the bubble's clock.
func syncProber(t *testing.T, m *memReg, n *pipeNet, mod func(*prober.Config)) *prober.Prober {
	t.Helper()
	cfg := prober.Config{Registry: m, Fetcher: pipeFetcher(t, n), Interval: 4 * time.Second, Tick: time.Second,
		Jitter: -1, Owner: "prober-sync"}
	if mod != nil {
		mod(&cfg)
	}
	p, err := prober.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// shutdown stops p, abandoning rounds still running after a second.
func shutdown(t *testing.T, p *prober.Prober) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Error(err)
	}
}

// rpc is a JSON-RPC v1.0 interface.
func rpc(url string) agentcard.Interface {
	return agentcard.Interface{URL: url, Binding: "JSONRPC", ProtocolVersion: "1.0"}
}

// rpcs are n JSON-RPC interfaces at format (with one %d).
func rpcs(n int, format string) []agentcard.Interface {
	out := make([]agentcard.Interface, n)
	for i := range out {
		out[i] = rpc(fmt.Sprintf(format, i))
	}
	return out
}
