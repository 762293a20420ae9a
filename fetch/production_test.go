package fetch_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// The production policy with no allowances never sends a single request to
// the loopback fleet, plain or TLS, and records blocked_address.
func TestProductionPolicyNeverReachesFleet(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 3, TLS: tlsOn})
		var agents []*agentfleet.AgentHandle
		for range 6 {
			agents = append(agents, fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal}))
		}
		p := fetch.DefaultPolicy()
		p.RootCAs = fleet.CertPool()
		f := newFetcher(t, fetch.Config{Policy: p})
		for _, a := range agents {
			_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL(), FollowRedirects: true, SameOriginOnly: true})
			wantClass(t, err, fetch.ClassBlockedAddress)
		}
		for _, h := range fleet.Hosts() {
			if n := h.Requests(); n != 0 {
				t.Errorf("tls=%v: host %s received %d requests under the production policy", tlsOn, h.Origin(), n)
			}
		}
	}
}

// B.11, B.12: a name resolving to loopback, private, link-local, CGNAT or
// metadata addresses, or to the ranges naive checks miss: no connection,
// "refusing to connect to reserved address".
func TestNameResolvingToReservedB11B12(t *testing.T) {
	res := newResolver()
	targets := []string{"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.0.10", "169.254.169.254", "fd00:ec2::254", "100.64.0.1",
		"64:ff9b::a9fe:a9fe", "2002:7f00:1::", "::ffff:127.0.0.1", "0.0.0.0", "192.0.0.1", "198.18.0.1", "240.0.0.1",
		"255.255.255.255", "224.0.0.1", "ff02::1", "::"}
	for _, a := range targets {
		res.Set("agent.example", addrs(a))
		dial, dials := noDial(t)
		f := newFetcher(t, fetch.Config{Policy: fetch.DefaultPolicy(), Resolver: res, DialContext: dial})
		_, err := f.Fetch(t.Context(), fetch.Request{URL: "https://agent.example/.well-known/agent-card.json"})
		fe := wantClass(t, err, fetch.ClassBlockedAddress)
		if !errors.Is(err, fetch.ErrReservedAddress) || !strings.Contains(err.Error(), "refusing to connect to reserved address "+netip.MustParseAddr(a).String()) {
			t.Errorf("%s: error %q does not say it refused the reserved address", a, err)
		}
		if fe.Hop != "https://agent.example/.well-known/agent-card.json" {
			t.Errorf("hop = %q", fe.Hop)
		}
		if dials.Load() != 0 {
			t.Errorf("%s: %d dials", a, dials.Load())
		}
	}
}

// A.2 at the fetch level: numeric spellings never reach a resolver.
func TestNumericHostsNeverResolved(t *testing.T) {
	res := newResolver()
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy(), Resolver: res})
	for _, host := range []string{"2130706433", "0x7f.1", "127.1", "0177.0.0.1", "a.b.0x7f"} {
		_, err := f.Fetch(t.Context(), fetch.Request{URL: "http://" + host + "/"})
		wantClass(t, err, fetch.ClassBlockedAddress)
		if !errors.Is(err, fetch.ErrBadURL) {
			t.Errorf("%s: %v, want ErrBadURL", host, err)
		}
		if res.Lookups(host) != 0 {
			t.Errorf("%s was looked up", host)
		}
	}
}

func TestURLPolicy(t *testing.T) {
	f := newFetcher(t, fetch.Config{Policy: fetch.DefaultPolicy(), Resolver: newResolver()})
	cases := map[string]error{
		"http://agent.example/":          fetch.ErrSchemeNotAllowed,
		"gopher://agent.example/":        fetch.ErrUnsupportedScheme,
		"file:///etc/passwd":             fetch.ErrUnsupportedScheme,
		"ftp://agent.example/card.json":  fetch.ErrUnsupportedScheme,
		"https://user:pw@agent.example/": fetch.ErrBadURL,
		"https:///no-host":               fetch.ErrBadURL,
		"https://a b/":                   fetch.ErrBadURL,
	}
	for url, want := range cases {
		_, err := f.Fetch(t.Context(), fetch.Request{URL: url})
		wantClass(t, err, fetch.ClassBlockedAddress)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", url, err, want)
		}
	}
}
