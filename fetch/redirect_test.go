package fetch_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

func cardRequest(url string) fetch.Request {
	return fetch.Request{URL: url, FollowRedirects: true, SameOriginOnly: true}
}

func TestRedirectChainWithinLimit(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	for _, code := range []int{301, 302, 303, 307, 308} {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.RedirectChain, Hops: 3, RedirectStatus: code})
		resp, err := f.Fetch(t.Context(), cardRequest(a.URL()))
		if err != nil {
			t.Fatalf("%d: %v", code, err)
		}
		if resp.URL != a.URL()+"?hop=3" || string(resp.Body) != string(a.Card()) || a.Requests() != 4 {
			t.Errorf("%d: final %s, %d requests", code, resp.URL, a.Requests())
		}
	}
}

// B.16: more than 3 redirects; a loop A → B → A.
func TestRedirectLimitsB16(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	chain := fleet.Add(agentfleet.Agent{Behavior: agentfleet.RedirectChain, Hops: 4})
	_, err := f.Fetch(t.Context(), cardRequest(chain.URL()))
	fe := wantClass(t, err, fetch.ClassTooManyRedirects)
	if fe.Hop != chain.URL()+"?hop=4" || chain.Requests() != 4 {
		t.Errorf("hop %q after %d requests", fe.Hop, chain.Requests())
	}
	loop := fleet.Add(agentfleet.Agent{Behavior: agentfleet.RedirectLoop})
	_, err = f.Fetch(t.Context(), cardRequest(loop.URL()))
	fe = wantClass(t, err, fetch.ClassRedirectLoop)
	if fe.Hop != loop.URL() || loop.Requests() != 2 {
		t.Errorf("loop hop %q after %d requests", fe.Hop, loop.Requests())
	}
	// Redirects are not followed unless asked (key sets never follow).
	_, err = f.Fetch(t.Context(), fetch.Request{URL: chain.URL()})
	fe = wantClass(t, err, fetch.ClassHTTPStatus)
	if fe.HTTPStatus != http.StatusFound || !errors.Is(err, fetch.ErrRedirectNotFollowed) {
		t.Errorf("unfollowed redirect: %v", err)
	}
}

// B.15–B.17: each hostile redirect target fails with a specific error that
// names the hop, and nothing is requested from the target.
func TestHostileRedirectTargetsB15B16B17(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, BaseAddr: "127.0.0.20"})
	other := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Host: fleet.Hosts()[1]})
	long := "/" + strings.Repeat("a", 3000)
	cases := []struct {
		location string
		sameOnly bool
		class    string
		sentinel error
	}{
		{"http://169.254.169.254/latest/meta-data", true, fetch.ClassCrossOriginRedirect, fetch.ErrCrossOriginRedirect},
		{"http://169.254.169.254/latest/meta-data", false, fetch.ClassBlockedAddress, fetch.ErrReservedAddress},
		{"http://[::1]/", false, fetch.ClassBlockedAddress, fetch.ErrReservedAddress},
		{"http://10.0.0.5:8080/", false, fetch.ClassBlockedAddress, fetch.ErrReservedAddress},
		{other.URL(), true, fetch.ClassCrossOriginRedirect, fetch.ErrCrossOriginRedirect},
		{"http://agent.well-known/.well-known/agent-card.json", true, fetch.ClassCrossOriginRedirect, fetch.ErrCrossOriginRedirect},
		{"gopher://127.0.0.20:70/_GET", true, fetch.ClassBlockedAddress, fetch.ErrUnsupportedScheme},
		{"file:///etc/passwd", false, fetch.ClassBlockedAddress, fetch.ErrUnsupportedScheme},
		{"ftp://127.0.0.20/card.json", false, fetch.ClassBlockedAddress, fetch.ErrUnsupportedScheme},
		{long, true, fetch.ClassHTTPStatus, fetch.ErrBadLocation},
		{"http://user:pw@127.0.0.20/", false, fetch.ClassBlockedAddress, fetch.ErrBadURL},
		{"https://93.184.215.14:8443/card.json", false, fetch.ClassBlockedAddress, fetch.ErrPortNotAllowed}, // B.17, refused before dialing
	}
	p := loopbackPolicy()
	p.AllowNetworks = p.AllowNetworks[:0]
	p.AllowNetworks = append(p.AllowNetworks, mustPrefix("127.0.0.20/31"))
	f := newFetcher(t, fetch.Config{Policy: p, Resolver: newResolver()})
	for _, c := range cases {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Redirect, Location: c.location, Host: fleet.Hosts()[0]})
		_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL(), FollowRedirects: true, SameOriginOnly: c.sameOnly})
		fe := wantClass(t, err, c.class)
		if !errors.Is(err, c.sentinel) {
			t.Errorf("%.60s: %v, want %v", c.location, err, c.sentinel)
		}
		if c.location != long && !strings.Contains(c.location, "@") && !strings.HasPrefix(fe.Hop, c.location[:min(len(c.location), 30)]) {
			t.Errorf("%.60s: hop %q does not name the target", c.location, fe.Hop)
		}
		if fe.HTTPStatus != http.StatusFound {
			t.Errorf("%.60s: HTTPStatus %d", c.location, fe.HTTPStatus)
		}
	}
	if other.Requests() != 0 {
		t.Errorf("cross-origin target fetched %d times", other.Requests())
	}
}

// B.16: an https → http downgrade on the same host is refused even when
// other origins would be allowed.
func TestRedirectDowngradeB16(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{TLS: true, BaseAddr: "127.0.0.30"})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Redirect, Location: "http://127.0.0.30/.well-known/agent-card.json"})
	p := loopbackPolicy()
	p.RootCAs = fleet.CertPool()
	f := newFetcher(t, fetch.Config{Policy: p})
	for _, same := range []bool{true, false} {
		_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL(), FollowRedirects: true, SameOriginOnly: same})
		fe := wantClass(t, err, fetch.ClassCrossOriginRedirect)
		if !errors.Is(err, fetch.ErrSchemeDowngrade) || fe.Hop != "http://127.0.0.30/.well-known/agent-card.json" {
			t.Errorf("same-origin=%v: %v", same, err)
		}
	}
}

// B.17: a non-443 port on a public address is refused at the dial check,
// whether reached directly or by redirect.
func TestNon443PortRefusedB17(t *testing.T) {
	res := newResolver()
	res.Set("agent.example", addrs("93.184.215.14"))
	dial, dials := noDial(t)
	f := newFetcher(t, fetch.Config{Policy: fetch.DefaultPolicy(), Resolver: res, DialContext: dial})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: "https://agent.example:8443/.well-known/agent-card.json"})
	wantClass(t, err, fetch.ClassBlockedAddress)
	if !errors.Is(err, fetch.ErrPortNotAllowed) || dials.Load() != 0 {
		t.Errorf("err %v, %d dials", err, dials.Load())
	}
}
