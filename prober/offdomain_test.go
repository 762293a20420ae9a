package prober_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/prober/probertest"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// addAutoApproved stores an agent the --auto-approve verified policy
// approved: a crawl of a card that verified, no admin involved.
func addAutoApproved(t *testing.T, svc *registry.Service, c *clock, name string, ifs ...iface) string {
	t.Helper()
	a, err := svc.Submit(t.Context(), registry.Anonymous, fmt.Sprintf("https://%s.example.com/card.json", name), "")
	if err != nil {
		t.Fatal(err)
	}
	raw := cardWith(name, ifs...)
	p, err := agentcard.Parse(raw, agentcard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := "crawl-" + a.ID
	if _, err := svc.ClaimDue(t.Context(), owner, c.Now(), time.Minute, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	res := registry.FetchResult{
		Attempt: registry.FetchAttempt{At: c.Now(), URL: a.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
		Raw:     raw, Card: p.Card, Problems: p.Problems, ProtocolVersion: "1.0",
		Trust: registry.TrustVerified, Thumbprints: []string{"thumb"}, NextFetchAt: c.Now().Add(time.Hour),
	}
	if err := svc.RecordFetch(t.Context(), owner, a.ID, res); err != nil {
		t.Fatal(err)
	}
	if err := svc.ReleaseLeases(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.Get(t.Context(), admin, a.ID); err != nil || got.Status != registry.StatusApproved {
		t.Fatalf("not approved by the policy: %v %+v", err, got)
	}
	return a.ID
}

// docs/threats.md K.99, through the real registry (SQLite and PostgreSQL)
// and real loopback HTTP: five interfaces off the card's domain (the
// cards are on *.example.com, the endpoints on 127.0.0.1) are not probed
// for an agent the policy approved, and two of them are for one a curator
// approved, or restored after a suspension.
func TestOffDomainInterfacesNeedCurator(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		fleet := probertest.Start()
		defer fleet.Close()
		f, _ := newFetcher(t, fleet)
		c := newClock()
		svc := registry.NewService(s, registry.ServiceConfig{Now: c.Now, AutoApprove: registry.AutoApproveVerified})
		ifaces := func(prefix string) []iface {
			var out []iface
			for i := range 5 {
				out = append(out, iface{fleet.Add(fmt.Sprintf("%s-%d", prefix, i), probertest.JSONRPCv1), "JSONRPC", "1.0"})
			}
			return out
		}
		auto := addAutoApproved(t, svc, c, "auto", ifaces("auto")...)
		curated := addAgent(t, svc, c, "curated", ifaces("curated")...)
		restored := addAutoApproved(t, svc, c, "restored", ifaces("restored")...)
		for _, a := range []registry.Action{registry.ActionSuspend, registry.ActionRestore} {
			if _, err := svc.Act(t.Context(), admin, restored, a, registry.ActionRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		p := newProber(t, svc, f, c, func(cfg *prober.Config) { cfg.MaxOffDomain = 0 }) // the defaults
		if n, err := p.Round(t.Context()); err != nil || n != 3 {
			t.Fatalf("Round recorded %d, %v; want 3", n, err)
		}
		for _, tc := range []struct {
			id, prefix string
			probed     int
			state      registry.LivenessState
		}{{auto, "auto", 0, registry.LivenessUnknown}, {curated, "curated", 2, registry.LivenessAnswering},
			{restored, "restored", 2, registry.LivenessAnswering}} {
			hits := 0
			for i := range 5 {
				h := fleet.Hits(fmt.Sprintf("%s-%d", tc.prefix, i))
				if h > 0 && i >= tc.probed {
					t.Errorf("%s: interface %d probed beyond the first %d", tc.prefix, i, tc.probed)
				}
				hits += h
			}
			a, err := svc.Get(t.Context(), admin, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if hits != tc.probed || len(a.Liveness.Interfaces) != tc.probed || a.Liveness.State != tc.state {
				t.Errorf("%s: %d requests, %d interfaces with a verdict, state %s; want %d, %d, %s",
					tc.prefix, hits, len(a.Liveness.Interfaces), a.Liveness.State, tc.probed, tc.probed, tc.state)
			}
		}
	})
}
