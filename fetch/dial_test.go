package fetch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/fetch"
)

// fleetURL rewrites an agent URL to use host name instead of its IP.
func fleetURL(t *testing.T, a *agentfleet.AgentHandle, name string) (string, netip.Addr) {
	t.Helper()
	u, err := url.Parse(a.URL())
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr(u.Hostname())
	u.Host = net.JoinHostPort(name, u.Port())
	return u.String(), ip
}

// B.13: mixed answers — only the allowed address is dialed; the reserved
// one is checked once (before dialing) and never reaches connect.
func TestMixedAnswersDialOnlyAllowedB13(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{BaseAddr: "127.0.0.2"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	u, ip := fleetURL(t, a, "mixed.test")
	res := newResolver()
	res.Set("mixed.test", []netip.Addr{netip.MustParseAddr("10.0.0.1"), ip})
	p := loopbackPolicy()
	p.AllowNetworks = []netip.Prefix{netip.PrefixFrom(ip, 32)}
	log := newCheckLog(p.CheckAddr)
	f := newFetcher(t, fetch.Config{Policy: p, Resolver: res, CheckAddr: log.Check})
	resp, err := f.Fetch(t.Context(), fetch.Request{URL: u})
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if string(resp.Body) != string(a.Card()) {
		t.Error("body differs from the served card")
	}
	// 10.0.0.1: the pre-dial filter only. The fleet address: the filter and
	// the connect-time Control hook.
	if got := log.count("10.0.0.1"); got != 1 {
		t.Errorf("10.0.0.1 checked %d times, want 1 (never dialed)", got)
	}
	if got := log.count(ip.String()); got != 2 {
		t.Errorf("%s checked %d times, want 2 (filter + dial-time control)", ip, got)
	}
}

// B.13: every answer reserved → blocked_address, nothing dialed.
func TestAllAnswersReservedB13(t *testing.T) {
	res := newResolver()
	res.Set("inside.test", addrs("10.0.0.1", "169.254.169.254", "::1"))
	dial, dials := noDial(t)
	f := newFetcher(t, fetch.Config{Policy: fetch.DefaultPolicy(), Resolver: res, DialContext: dial})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: "https://inside.test/"})
	wantClass(t, err, fetch.ClassBlockedAddress)
	if !errors.Is(err, fetch.ErrReservedAddress) || dials.Load() != 0 {
		t.Errorf("err %v, %d dials", err, dials.Load())
	}
}

// B.14: a name that alternates between a public answer and loopback never
// reaches loopback. The public answer is refused by the test sandbox (it is
// never dialed for real); the loopback one by the production check. Each
// connection resolves once, so what is dialed is what was checked.
func TestDNSRebindingNeverReachesLoopbackB14(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{BaseAddr: "127.0.0.3"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	u, ip := fleetURL(t, a, "rebind.test")
	res := newResolver()
	res.Set("rebind.test", addrs("93.184.215.14"), []netip.Addr{ip})
	p := fetch.DefaultPolicy()
	p.AllowInsecureHTTP = true
	errSandbox := errors.New("test sandbox: public addresses are never dialed")
	var publicChecks atomic.Int64
	check := func(ap netip.AddrPort) error {
		if !cardurl.IsReserved(ap.Addr()) {
			publicChecks.Add(1)
			return errSandbox
		}
		return p.CheckAddr(ap)
	}
	f := newFetcher(t, fetch.Config{Policy: p, Resolver: res, CheckAddr: check})
	for i := range 6 {
		_, err := f.Fetch(t.Context(), fetch.Request{URL: u})
		if i%2 == 0 && !errors.Is(err, errSandbox) {
			t.Errorf("fetch %d: %v, want the sandbox refusal of the public answer", i, err)
		}
		if i%2 == 1 && !errors.Is(err, fetch.ErrReservedAddress) {
			t.Errorf("fetch %d: %v, want ErrReservedAddress", i, err)
		}
	}
	if a.Requests() != 0 || fleet.Hosts()[0].Requests() != 0 {
		t.Errorf("loopback reached: %d requests", fleet.Hosts()[0].Requests())
	}
	if got := res.Lookups("rebind.test"); got != 6 {
		t.Errorf("%d lookups for 6 fetches, want one per connection", got)
	}
}

// B.14: the Control hook checks the socket's actual address at connect
// time. A check that passes the pre-dial filter and then refuses (a
// stand-in for any gap between lookup and connect) stops the connection.
func TestDialTimeControlRefusesB14(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{BaseAddr: "127.0.0.4"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	p := loopbackPolicy()
	var calls atomic.Int64
	check := func(ap netip.AddrPort) error {
		if calls.Add(1) == 1 {
			return nil // the pre-dial filter
		}
		return fetch.DefaultPolicy().CheckAddr(ap) // connect time: production rules
	}
	f := newFetcher(t, fetch.Config{Policy: p, CheckAddr: check})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
	wantClass(t, err, fetch.ClassBlockedAddress)
	if !errors.Is(err, fetch.ErrReservedAddress) {
		t.Errorf("err = %v", err)
	}
	if calls.Load() != 2 || a.Requests() != 0 {
		t.Errorf("%d checks, %d requests; want 2 checks and no request", calls.Load(), a.Requests())
	}
}

// B.19: a black-holed address fails at the dial timeout, as "timeout during
// connect". The total timeout is a minute, so only the dial timeout can end
// this test.
func TestBlackHoleFailsAtDialTimeoutB19(t *testing.T) {
	p := loopbackPolicy()
	p.DialTimeout = 50e6 // 50 ms
	p.Timeout = 60e9
	p.ResponseHeaderTimeout = 60e9
	blackHole := func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done() // SYNs into the void
		return nil, ctx.Err()
	}
	f := newFetcher(t, fetch.Config{Policy: p, DialContext: blackHole})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: "http://127.0.0.9:8080/"})
	wantClass(t, err, fetch.ClassTimeout)
	if !errors.Is(err, fetch.ErrConnectTimeout) {
		t.Errorf("err = %v, want ErrConnectTimeout", err)
	}
}

// B.24: HTTPS_PROXY and HTTP_PROXY in the environment are ignored; the
// request goes straight to the agent.
func TestProxyEnvironmentIgnoredB24(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer proxy.Close()
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	fleet := agentfleet.Start(t, agentfleet.Options{BaseAddr: "127.0.0.5"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	if _, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()}); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if proxied.Load() != 0 || a.Requests() != 1 {
		t.Errorf("proxy saw %d requests, agent %d; want 0 and 1", proxied.Load(), a.Requests())
	}
}

// B.25: DNS failure classes.
func TestDNSFailuresB25(t *testing.T) {
	res := newResolver()
	res.Fail("servfail.test", &net.DNSError{Err: "server misbehaving", Name: "servfail.test", IsTemporary: true})
	res.Fail("slow.test", &net.DNSError{Err: "i/o timeout", Name: "slow.test", IsTimeout: true, IsTemporary: true})
	res.Set("empty.test", nil)
	res.Set("cname-internal.test", addrs("10.20.30.40")) // a CNAME chain ending inside
	f := newFetcher(t, fetch.Config{Policy: fetch.DefaultPolicy(), Resolver: res})
	get := func(host string) error {
		_, err := f.Fetch(t.Context(), fetch.Request{URL: "https://" + host + "/.well-known/agent-card.json"})
		return err
	}
	var de *net.DNSError
	if err := get("nxdomain.test"); !ClassIs(err, fetch.ClassDNS) || !errors.As(err, &de) || !de.IsNotFound {
		t.Errorf("NXDOMAIN: %v", err)
	}
	if err := get("servfail.test"); !ClassIs(err, fetch.ClassDNS) || !errors.As(err, &de) || !de.IsTemporary {
		t.Errorf("SERVFAIL: %v", err)
	}
	if err := get("slow.test"); !ClassIs(err, fetch.ClassDNS) || !errors.As(err, &de) || !de.IsTimeout {
		t.Errorf("DNS timeout: %v", err)
	}
	if err := get("empty.test"); !ClassIs(err, fetch.ClassDNS) || !errors.Is(err, fetch.ErrNoAddresses) {
		t.Errorf("no answers: %v", err)
	}
	if err := get("cname-internal.test"); !ClassIs(err, fetch.ClassBlockedAddress) {
		t.Errorf("internal CNAME target: %v", err)
	}
}

func ClassIs(err error, class string) bool { return fetch.ClassOf(err) == class }

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.6:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	_, err = f.Fetch(t.Context(), fetch.Request{URL: "http://" + addr + "/"})
	wantClass(t, err, fetch.ClassConnect)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("err = %v, want ECONNREFUSED in the chain", err)
	}
}
