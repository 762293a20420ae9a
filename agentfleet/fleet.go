// Package agentfleet runs a fleet of fake A2A agents on loopback for the
// crawler's tests and benchmarks, the load tools and `cardex serve --demo`: many agents on distinct 127.0.0.x
// addresses (Linux routes all of 127/8 to lo), each with a behaviour —
// normal, signed, tampered, conditional, changing, slow, hanging, huge,
// redirecting, failing — and counters of requests and peak concurrency so
// tests can assert "never fetched" and "never fetched twice at once".
//
// One listener per address serves any number of agents by path, so a fleet
// of 10,000 agents needs only as many sockets as it has addresses.
package agentfleet

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Options configure a fleet.
type Options struct {
	// Hosts is the number of loopback addresses (default 1), starting at
	// BaseAddr (default 127.0.0.1) and counting up.
	Hosts    int
	BaseAddr string
	// Port for every listener; 0 picks a free port per address.
	Port int
	// TLS serves https with a certificate from a fleet CA (Fleet.CA).
	TLS bool
	// Signer signs the cards of signed, tampered and off-origin-jku agents.
	Signer Signer
	// DripInterval is the pause between bytes of slow-drip agents
	// (default 100 ms).
	DripInterval time.Duration
}

// Fleet is a running set of fake agents.
type Fleet struct {
	t      TB
	opts   Options
	hosts  []*Host
	ca     *CA
	start  time.Time
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	next int
}

// TB is what Start needs of a test (testing.TB has it). The package does
// not import testing, so the cardex binary that runs the demo fleet does
// not link the test framework.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Start starts a fleet and closes it when the test ends. With a nil t it
// panics on failure and the caller closes it.
func Start(t TB, opts Options) *Fleet {
	f, err := New(opts)
	if err != nil {
		if t != nil {
			t.Helper()
			t.Fatalf("agentfleet: %v", err)
		}
		panic(err)
	}
	f.t = t
	if t != nil {
		t.Cleanup(f.Close)
	}
	return f
}

// New starts a fleet; the caller closes it.
func New(opts Options) (*Fleet, error) {
	if opts.Hosts <= 0 {
		opts.Hosts = 1
	}
	if opts.BaseAddr == "" {
		opts.BaseAddr = "127.0.0.1"
	}
	if opts.DripInterval <= 0 {
		opts.DripInterval = 100 * time.Millisecond
	}
	base, err := netip.ParseAddr(opts.BaseAddr)
	if err != nil || !base.IsLoopback() {
		return nil, fmt.Errorf("base address %q is not a loopback address", opts.BaseAddr)
	}
	f := &Fleet{opts: opts, start: time.Now().UTC().Truncate(time.Second), closed: make(chan struct{})}
	addrs := make([]netip.Addr, opts.Hosts)
	for i, a := 0, base; i < opts.Hosts; i, a = i+1, a.Next() {
		if !a.IsLoopback() {
			return nil, fmt.Errorf("%d hosts from %s leave the loopback range", opts.Hosts, base)
		}
		addrs[i] = a
	}
	var tlsConfig *tls.Config
	if opts.TLS {
		if f.ca, err = NewCA("Cardex fleet CA"); err != nil {
			return nil, err
		}
		ips := make([]net.IP, len(addrs))
		for i, a := range addrs {
			ips[i] = a.AsSlice()
		}
		leaf, err := f.ca.Issue(LeafSpec{IPs: ips, DNSNames: []string{"localhost"}})
		if err != nil {
			return nil, err
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}
	}
	for i, a := range addrs {
		h, err := f.listen(i, a, tlsConfig)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.hosts = append(f.hosts, h)
	}
	return f, nil
}

func (f *Fleet) listen(i int, a netip.Addr, tlsConfig *tls.Config) (*Host, error) {
	ln, err := net.Listen("tcp", netip.AddrPortFrom(a, uint16(f.opts.Port)).String())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", a, err)
	}
	scheme := "http"
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
		scheme = "https"
	}
	h := &Host{
		fleet:  f,
		index:  i,
		origin: scheme + "://" + ln.Addr().String(),
		ln:     ln,
		agents: map[string]*AgentHandle{},
	}
	// Hostile behaviours make clients hang up mid-response; the server's
	// complaints about that are expected, not news.
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	go h.srv.Serve(ln)
	return h, nil
}

// Close stops every listener and ends every pending response (hanging and
// dripping agents included).
func (f *Fleet) Close() {
	f.once.Do(func() {
		close(f.closed)
		for _, h := range f.hosts {
			h.srv.Close()
		}
	})
}

// Hosts returns the fleet's hosts in address order.
func (f *Fleet) Hosts() []*Host { return f.hosts }

// CA is the fleet's certificate authority (nil without Options.TLS).
func (f *Fleet) CA() *CA { return f.ca }

// CertPool trusts the fleet's certificates (nil without Options.TLS).
func (f *Fleet) CertPool() *x509.CertPool {
	if f.ca == nil {
		return nil
	}
	return f.ca.Pool()
}

// Add adds an agent; it fails the test (or panics without one) on a bad
// agent description.
func (f *Fleet) Add(a Agent) *AgentHandle {
	h, err := f.TryAdd(a)
	if err != nil {
		if f.t != nil {
			f.t.Helper()
			f.t.Fatalf("agentfleet: %v", err)
		}
		panic(err)
	}
	return h
}

// TryAdd adds an agent and reports a bad description as an error.
func (f *Fleet) TryAdd(a Agent) (*AgentHandle, error) {
	f.mu.Lock()
	id := f.next
	f.next++
	f.mu.Unlock()
	host := a.Host
	if host == nil {
		host = f.hosts[id%len(f.hosts)]
	}
	if host.fleet != f {
		return nil, errors.New("agent host belongs to another fleet")
	}
	return host.add(id, a)
}

// Host is one loopback address of the fleet: its own origin, serving its
// agents by path and a key set at /.well-known/jwks.json.
type Host struct {
	fleet  *Fleet
	index  int
	origin string
	ln     net.Listener
	srv    *http.Server

	mu       sync.RWMutex
	agents   map[string]*AgentHandle
	key      crypto.Signer
	keys     []jose.JSONWebKey
	jwks     []byte
	requests counter
	jwksReqs counter
}

// JWKSPath is where every host serves the keys of the agents it vouches for.
const JWKSPath = "/.well-known/jwks.json"

// Origin is scheme://127.0.0.x:port.
func (h *Host) Origin() string { return h.origin }

// JWKSURL is the host's key-set URL.
func (h *Host) JWKSURL() string { return h.origin + JWKSPath }

// Requests counts every request the host received, on any path.
func (h *Host) Requests() int64 { return h.requests.n.Load() }

// JWKSRequests counts fetches of the host's key set.
func (h *Host) JWKSRequests() int64 { return h.jwksReqs.n.Load() }

func (h *Host) publishKey(k jose.JSONWebKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, have := range h.keys {
		if have.KeyID == k.KeyID {
			return
		}
	}
	h.keys = append(h.keys, k)
	h.jwks = jwksJSON(h.keys)
}

// signingKey is the host's shared key, made on first use.
func (h *Host) signingKey() (crypto.Signer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key == nil {
		k, err := NewSigningKey()
		if err != nil {
			return nil, err
		}
		h.key = k
	}
	return h.key, nil
}

func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.enter()
	defer h.requests.leave()
	h.mu.RLock()
	a := h.agents[r.URL.Path]
	jwks := h.jwks
	h.mu.RUnlock()
	switch {
	case a != nil:
		a.serve(w, r)
	case r.URL.Path == JWKSPath && jwks != nil:
		h.jwksReqs.enter()
		defer h.jwksReqs.leave()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(jwks)
	default:
		http.NotFound(w, r)
	}
}
