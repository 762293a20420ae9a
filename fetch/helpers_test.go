package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cardexhq/cardex/fetch"
)

// loopbackPolicy is what tests run with: the fleet lives on plain http in
// 127.0.0.0/8 (docs/threats.md: tests inject a loopback-permitting policy).
func loopbackPolicy() fetch.Policy {
	p := fetch.DefaultPolicy()
	p.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	p.AllowInsecureHTTP = true
	return p
}

func newFetcher(t testing.TB, cfg fetch.Config) *fetch.Fetcher {
	t.Helper()
	f, err := fetch.New(cfg)
	if err != nil {
		t.Fatalf("fetch.New: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// wantClass asserts err is a *FetchError of class and returns it.
func wantClass(t *testing.T, err error, class string) *fetch.FetchError {
	t.Helper()
	var fe *fetch.FetchError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FetchError", err, err)
	}
	if fe.Class != class {
		t.Fatalf("class = %q, want %q (error: %v)", fe.Class, class, err)
	}
	return fe
}

// resolver answers from a table; a host maps to a list of answers used in
// turn (so a name can rebind between lookups, B.14).
type resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	errs    map[string]error
	calls   map[string]int
}

func newResolver() *resolver {
	return &resolver{answers: map[string][][]netip.Addr{}, errs: map[string]error{}, calls: map[string]int{}}
}

func (r *resolver) set(host string, answers ...[]netip.Addr) { r.answers[host] = answers }

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.calls[host]
	r.calls[host]++
	if err, ok := r.errs[host]; ok {
		return nil, err
	}
	a, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return a[n%len(a)], nil
}

func (r *resolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// checkLog wraps a check and counts how often each address was checked.
type checkLog struct {
	check fetch.AddrCheck
	mu    sync.Mutex
	seen  map[netip.Addr]int
}

func newCheckLog(check fetch.AddrCheck) *checkLog {
	return &checkLog{check: check, seen: map[netip.Addr]int{}}
}

func (c *checkLog) Check(ap netip.AddrPort) error {
	c.mu.Lock()
	c.seen[ap.Addr()]++
	c.mu.Unlock()
	return c.check(ap)
}

func (c *checkLog) count(a string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[netip.MustParseAddr(a)]
}

// noDial fails the test if anything is dialed: "no connection is made".
func noDial(t *testing.T) (func(ctx context.Context, network, addr string) (net.Conn, error), *atomic.Int64) {
	var n atomic.Int64
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		t.Errorf("dialed %s although the policy forbids it", addr)
		return nil, fmt.Errorf("test: refusing to dial %s", addr)
	}, &n
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func discardLog() *log.Logger { return slog.NewLogLogger(slog.DiscardHandler, slog.LevelError) }
