package crawler_test

import (
	"net/netip"
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

func cardRequest(url string) fetch.Request {
	return fetch.Request{URL: url, FollowRedirects: true, SameOriginOnly: true}
}

// resolver is the fetch tests' table of name answers (fetchtest).
type resolver = fetchtest.Resolver

var (
	newResolver = fetchtest.NewResolver
	addrs       = fetchtest.Addrs
)
