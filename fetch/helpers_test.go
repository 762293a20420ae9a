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
	"github.com/cardexhq/cardex/fetch/fetchtest"
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

// resolver is the fetch tests' table of name answers (fetchtest).
type resolver = fetchtest.Resolver

var (
	newResolver = fetchtest.NewResolver
	addrs       = fetchtest.Addrs
)

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
