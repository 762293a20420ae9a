package prober_test

import (
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/prober/probertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// want is the expected latest probe of an agent's one interface.
type want struct {
	outcome    string
	class      string
	httpStatus int
	rpcCode    int
	// next is the least delay before the agent is due again.
	next time.Duration
}

// TestFleetOutcomes probes a loopback fleet with one agent per behaviour
// and checks each outcome, that nothing reached a reserved address, and
// that no probe called a method that creates work.
func TestFleetOutcomes(t *testing.T) {
	fleet := probertest.Start()
	defer fleet.Close()
	// A listener on a reserved loopback address the default policy (plus
	// 127.0.0.1/32 for the fleet) refuses: the redirecting agent points
	// at it, and it must never see a connection.
	trap, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer trap.Close()
	var trapped atomic.Int64
	go func() {
		for {
			c, err := trap.Accept()
			if err != nil {
				return
			}
			trapped.Add(1)
			c.Close()
		}
	}()
	fleet.RedirectTarget = "http://" + trap.Addr().String() + "/steal"
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + closed.Addr().String() + "/a2a"
	closed.Close() // nothing listens there now: connection refused

	c := newClock()
	svc := registrytest.Service(registrytest.SQLite(t), c.Now)
	f, dials := newFetcher(t, fleet)
	p := newProber(t, svc, f, c, nil)

	cases := map[string]struct {
		ifs  []iface
		want want
	}{
		"jsonrpc-1.0":          {[]iface{{fleet.Add("v1", probertest.JSONRPCv1), "JSONRPC", "1.0"}}, want{registry.OutcomeAnswering, "", 200, -32001, 15 * time.Minute}},
		"jsonrpc-0.3":          {[]iface{{fleet.Add("v03", probertest.JSONRPCv03), "JSONRPC", "0.3"}}, want{registry.OutcomeAnswering, "", 200, -32001, 15 * time.Minute}},
		"jsonrpc-0.3-as-1.0":   {[]iface{{fleet.Add("v03b", probertest.JSONRPCv03), "JSONRPC", "1.0"}}, want{registry.OutcomeAnswering, "", 200, -32001, 15 * time.Minute}},
		"jsonrpc-version-500":  {[]iface{{fleet.Add("strict", probertest.JSONRPCStrict), "JSONRPC", "0.3"}}, want{registry.OutcomeAnswering, "", 500, -32009, 15 * time.Minute}},
		"jsonrpc-no-method":    {[]iface{{fleet.Add("nomethod", probertest.MethodMissing), "JSONRPC", "1.0"}}, want{registry.OutcomeNonconformant, "", 200, -32601, 15 * time.Minute}},
		"http+json-1.0":        {[]iface{{fleet.Add("rest1", probertest.RESTv1), "HTTP+JSON", "1.0"}}, want{registry.OutcomeAnswering, "", 404, 404, 15 * time.Minute}},
		"http+json-0.3":        {[]iface{{fleet.Add("rest03", probertest.RESTv03), "HTTP+JSON", "0.3"}}, want{registry.OutcomeAnswering, "", 404, -32001, 15 * time.Minute}},
		"http+json-no-route":   {[]iface{{fleet.Add("rest-html", probertest.HTML), "HTTP+JSON", "1.0"}}, want{registry.OutcomeNonconformant, "", 200, 0, 15 * time.Minute}},
		"grpc":                 {[]iface{{fleet.GRPCURL(), "GRPC", "1.0"}}, want{registry.OutcomeAnswering, "", 200, 12, 15 * time.Minute}},
		"needs-auth":           {[]iface{{fleet.Add("auth", probertest.AuthRequired), "JSONRPC", "1.0"}}, want{registry.OutcomeAuthRequired, "", 401, 0, 15 * time.Minute}},
		"html":                 {[]iface{{fleet.Add("html", probertest.HTML), "JSONRPC", "1.0"}}, want{registry.OutcomeNonconformant, "", 200, 0, 15 * time.Minute}},
		"json-not-rpc":         {[]iface{{fleet.Add("json", probertest.NotJSONRPC), "JSONRPC", "1.0"}}, want{registry.OutcomeNonconformant, "", 200, 0, 15 * time.Minute}},
		"hangs":                {[]iface{{fleet.Add("hang", probertest.Hang), "JSONRPC", "1.0"}}, want{registry.OutcomeUnreachable, fetch.ClassTimeout, 0, 0, 15 * time.Minute}},
		"resets":               {[]iface{{fleet.Add("reset", probertest.Reset), "JSONRPC", "1.0"}}, want{registry.OutcomeUnreachable, fetch.ClassConnect, 0, 0, 15 * time.Minute}},
		"refused":              {[]iface{{refusedURL, "JSONRPC", "1.0"}}, want{registry.OutcomeUnreachable, fetch.ClassConnect, 0, 0, 15 * time.Minute}},
		"503-retry-after":      {[]iface{{fleet.Add("down", probertest.Unavailable), "JSONRPC", "1.0"}}, want{registry.OutcomeUnreachable, "", 503, 0, 15 * time.Minute}},
		"429-retry-after":      {[]iface{{fleet.Add("slow", probertest.RateLimited), "JSONRPC", "1.0"}}, want{registry.OutcomeRateLimited, "", 429, 0, time.Hour}},
		"redirect-to-reserved": {[]iface{{fleet.Add("redir", probertest.RedirectToLocal), "JSONRPC", "1.0"}}, want{registry.OutcomeNonconformant, fetch.ClassCrossOriginRedirect, 307, 0, 15 * time.Minute}},
		"reserved-interface":   {[]iface{{"http://10.1.2.3/a2a", "JSONRPC", "1.0"}}, want{registry.OutcomeUnreachable, fetch.ClassBlockedAddress, 0, 0, 15 * time.Minute}},
		"metadata-interface":   {[]iface{{"http://169.254.169.254/latest", "HTTP+JSON", "1.0"}}, want{registry.OutcomeUnreachable, fetch.ClassBlockedAddress, 0, 0, 15 * time.Minute}},
	}
	ids := map[string]string{}
	for name, tc := range cases {
		ids[name] = addAgent(t, svc, c, name, tc.ifs...)
	}
	mixed := addAgent(t, svc, c, "mixed", iface{fleet.Add("mixed-ok", probertest.JSONRPCv1), "JSONRPC", "1.0"},
		iface{fleet.Add("mixed-html", probertest.HTML), "HTTP+JSON", "1.0"})
	n, err := p.Round(t.Context())
	if err != nil || n != len(cases)+1 {
		t.Fatalf("Round recorded %d, %v; want %d", n, err, len(cases)+1)
	}
	start := c.Now()
	for name, tc := range cases {
		a, err := svc.Get(t.Context(), admin, ids[name])
		if err != nil {
			t.Fatal(err)
		}
		l := a.Liveness
		if tc.want.outcome == registry.OutcomeRateLimited {
			// No verdict yet: no interface state, the agent stays unknown.
			if l.State != registry.LivenessUnknown || len(l.Interfaces) != 0 {
				t.Errorf("%s: %+v", name, l)
			}
		} else if len(l.Interfaces) != 1 {
			t.Errorf("%s: %d interfaces", name, len(l.Interfaces))
			continue
		} else {
			got := l.Interfaces[0]
			if got.Outcome != tc.want.outcome || got.ErrorClass != tc.want.class || got.HTTPStatus != tc.want.httpStatus || got.RPCCode != tc.want.rpcCode {
				t.Errorf("%s: got %s/%q/%d/%d (%s), want %+v", name, got.Outcome, got.ErrorClass, got.HTTPStatus, got.RPCCode, got.Message, tc.want)
			}
		}
		ps, _, err := svc.Probes(t.Context(), admin, ids[name], 10, "")
		if err != nil || len(ps) != 1 || ps[0].Outcome != tc.want.outcome {
			t.Errorf("%s: history %v %+v", name, err, ps)
		}
		if a.NextFetchAt == nil {
			t.Errorf("%s: no next fetch", name)
		}
	}
	states := map[string]registry.LivenessState{
		"jsonrpc-1.0": registry.LivenessAnswering, "needs-auth": registry.LivenessAnswering, "grpc": registry.LivenessAnswering,
		"html": registry.LivenessDegraded, "hangs": registry.LivenessUnreachable, "reserved-interface": registry.LivenessUnreachable,
	}
	for name, st := range states {
		a, _ := svc.Get(t.Context(), admin, ids[name])
		if a.Liveness.State != st {
			t.Errorf("%s: state %s, want %s", name, a.Liveness.State, st)
		}
	}
	if a, _ := svc.Get(t.Context(), admin, mixed); a.Liveness.State != registry.LivenessDegraded || len(a.Liveness.Interfaces) != 2 {
		t.Errorf("mixed agent: %+v", a.Liveness)
	}

	// Schedules: the 429 agent waits for its Retry-After, the 503 and
	// unreachable ones for the interval (first failure), everyone else
	// the interval. Nothing is due 14 minutes on; at 15 all but the 429
	// agent are.
	c.Advance(14 * time.Minute)
	if n, err := p.Round(t.Context()); err != nil || n != 0 {
		t.Fatalf("round inside the interval recorded %d, %v", n, err)
	}
	c.Advance(time.Minute)
	if n, err := p.Round(t.Context()); err != nil || n != len(cases) {
		t.Fatalf("second round recorded %d, %v; want %d (all but the rate-limited agent)", n, err, len(cases))
	}
	// Back-off: after a second unreachable round the hanging agent waits
	// twice the interval.
	c.Advance(16 * time.Minute)
	if n, err := p.Round(t.Context()); err != nil || n == 0 {
		t.Fatalf("third round: %d, %v", n, err)
	}
	if ps, _, _ := svc.Probes(t.Context(), admin, ids["hangs"], 10, ""); len(ps) != 2 {
		t.Errorf("hanging agent probed %d times by %v, want 2 (backed off)", len(ps), c.Now().Sub(start))
	}
	if ps, _, _ := svc.Probes(t.Context(), admin, ids["jsonrpc-1.0"], 10, ""); len(ps) != 3 {
		t.Errorf("answering agent probed %d times, want 3", len(ps))
	}

	if got := fleet.Forbidden(); len(got) != 0 {
		t.Errorf("probes called methods that create work: %v", got)
	}
	calls := fleet.Calls()
	for m := range calls {
		if !strings.HasPrefix(m, "GET ") && m != "GetTask" && m != "tasks/get" && !strings.HasPrefix(m, "grpc /grpc.health.v1.Health/") {
			t.Errorf("unexpected call %q", m)
		}
	}
	if trapped.Load() != 0 {
		t.Errorf("the reserved address got %d connections", trapped.Load())
	}
	for _, ap := range dials.seen() {
		if ap.Addr() != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("the dial check let %v through: only the fleet may be dialed", ap)
		}
	}
	if len(dials.seen()) == 0 {
		t.Fatal("no dial was checked: the test proves nothing")
	}
}
