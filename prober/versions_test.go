package prober_test

import (
	"testing"

	"github.com/cardexhq/cardex/prober/probertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// An interface listed for 1.0 and for 0.3 at one URL is probed under each
// version, and each keeps its own state: here an endpoint that answers 1.0
// and refuses 0.3 with VersionNotSupported (HTTP 500, -32009).
func TestOneURLProbedUnderEachProtocolVersion(t *testing.T) {
	fleet := probertest.Start()
	defer fleet.Close()
	c := newClock()
	svc := registrytest.Service(registrytest.SQLite(t), c.Now)
	f, _ := newFetcher(t, fleet)
	p := newProber(t, svc, f, c, nil)
	u := fleet.Add("both", probertest.JSONRPCStrict)
	id := addAgent(t, svc, c, "both", iface{u, "JSONRPC", "1.0"}, iface{u, "JSONRPC", "0.3"}, iface{u, "JSONRPC", "1.0"})
	if n, err := p.Round(t.Context()); err != nil || n != 1 {
		t.Fatalf("Round recorded %d, %v", n, err)
	}
	if hits := fleet.Hits("both"); hits != 2 {
		t.Fatalf("%d probes of the endpoint, want one per version", hits)
	}
	a, err := svc.Get(t.Context(), admin, id)
	if err != nil {
		t.Fatal(err)
	}
	l := a.Liveness.Interfaces
	if len(l) != 2 || l[0].ProtocolVersion != "0.3" || l[1].ProtocolVersion != "1.0" ||
		l[0].HTTPStatus != 500 || l[0].RPCCode != -32009 || l[1].HTTPStatus != 200 || l[1].RPCCode != -32001 {
		t.Fatalf("interfaces %+v", l)
	}
	ps, _, err := svc.Probes(t.Context(), admin, id, 10, "")
	if err != nil || len(ps) != 2 {
		t.Fatalf("history %v %+v", err, ps)
	}
	// A second round replaces both states, one row each.
	c.Advance(2 * 60 * 60 * 1e9)
	if n, err := p.Round(t.Context()); err != nil || n != 1 {
		t.Fatalf("second Round recorded %d, %v", n, err)
	}
	if a, _ := svc.Get(t.Context(), admin, id); len(a.Liveness.Interfaces) != 2 || a.Liveness.State != registry.LivenessAnswering {
		t.Fatalf("after the second round: %+v", a.Liveness)
	}
}
