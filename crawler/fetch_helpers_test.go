package crawler_test

import (
	"context"
	"net"
	"net/netip"
	"sync"
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

func cardRequest(url string) fetch.Request {
	return fetch.Request{URL: url, FollowRedirects: true, SameOriginOnly: true}
}

// resolver answers from a table; a host maps to a list of answers used in
// turn.
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

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}
