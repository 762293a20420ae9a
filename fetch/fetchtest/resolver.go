// Package fetchtest gives the tests of the fetcher and of its users a
// resolver they control, so that no test resolves an outside name. It is
// never linked into the cardex binary (cmd/cardex/imports_test.go).
package fetchtest

import (
	"context"
	"net"
	"net/netip"
	"sync"
)

// Resolver answers from a table: a host maps to a list of answers used in
// turn (so a name can rebind between lookups, docs/threats.md B.14); a
// host it does not know is not found.
type Resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	errs    map[string]error
	calls   map[string]int
}

// NewResolver is an empty table.
func NewResolver() *Resolver {
	return &Resolver{answers: map[string][][]netip.Addr{}, errs: map[string]error{}, calls: map[string]int{}}
}

// Set makes host answer each of answers in turn, over and over.
func (r *Resolver) Set(host string, answers ...[]netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[host] = answers
}

// Fail makes every lookup of host fail with err.
func (r *Resolver) Fail(host string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[host] = err
}

// LookupNetIP answers host from the table.
func (r *Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
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

// Lookups is how many times host was looked up.
func (r *Resolver) Lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// Addrs parses addresses.
func Addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}
