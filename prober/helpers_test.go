package prober_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/prober"
	"github.com/cardexhq/cardex/prober/probertest"
	"github.com/cardexhq/cardex/registry"
)

// clock is an injected clock for the registry and the prober's schedule.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var admin = registry.Principal{Role: registry.RoleAdmin, TokenID: "t-admin", Name: "root"}

// iface is one supportedInterfaces entry.
type iface struct{ URL, Binding, Version string }

// cardWith is a valid v1 card with the given interfaces.
func cardWith(name string, ifs ...iface) []byte {
	var si []map[string]string
	for _, i := range ifs {
		si = append(si, map[string]string{"url": i.URL, "protocolBinding": i.Binding, "protocolVersion": i.Version})
	}
	b, _ := json.Marshal(map[string]any{
		"name": name, "description": "An agent for probe tests.", "version": "1",
		"supportedInterfaces": si, "capabilities": map[string]any{},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": []any{map[string]any{"id": "s", "name": "Skill", "description": "Does it.", "tags": []string{"t"}}},
	})
	return b
}

var agentSeq struct {
	sync.Mutex
	n int
}

// addAgent stores an approved agent whose current card lists ifs: it is
// submitted, one crawl result is recorded, and an admin approves it.
func addAgent(t testing.TB, svc *registry.Service, c *clock, name string, ifs ...iface) string {
	t.Helper()
	agentSeq.Lock()
	agentSeq.n++
	n := agentSeq.n
	agentSeq.Unlock()
	a, err := svc.Submit(t.Context(), registry.Anonymous, fmt.Sprintf("https://agent%d.example.com/%s.json", n, name), "")
	if err != nil {
		t.Fatal(err)
	}
	raw := cardWith(name, ifs...)
	p, err := agentcard.Parse(raw, agentcard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := "crawl-" + a.ID
	due, err := svc.ClaimDue(t.Context(), owner, c.Now(), time.Minute, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		if d.ID != a.ID {
			continue
		}
		res := registry.FetchResult{
			Attempt: registry.FetchAttempt{At: c.Now(), URL: a.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
			Raw:     raw, Card: p.Card, Problems: p.Problems, ProtocolVersion: "1.0",
			Trust: registry.TrustUnsigned, NextFetchAt: c.Now().Add(time.Hour),
		}
		if err := svc.RecordFetch(t.Context(), owner, a.ID, res); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.ReleaseLeases(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	if _, err := svc.Act(t.Context(), admin, a.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: &one}); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// dialLog records every address the fetcher's dial check let through.
type dialLog struct {
	mu    sync.Mutex
	addrs []netip.AddrPort
}

func (d *dialLog) seen() []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]netip.AddrPort(nil), d.addrs...)
}

// newFetcher is the crawler's fetcher under the production policy plus
// 127.0.0.1/32 (the fleet) and http, trusting the fleet's gRPC
// certificate; every address the check allows is logged.
func newFetcher(t testing.TB, fleet *probertest.Fleet) (*fetch.Fetcher, *dialLog) {
	t.Helper()
	pol := fetch.DefaultPolicy()
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	pol.AllowInsecureHTTP = true
	pol.RootCAs = fleet.GRPCPool()
	log := &dialLog{}
	f, err := fetch.New(fetch.Config{
		Policy:   pol,
		Resolver: noResolver{},
		CheckAddr: func(ap netip.AddrPort) error {
			err := pol.CheckAddr(ap)
			if err == nil {
				log.mu.Lock()
				log.addrs = append(log.addrs, ap)
				log.mu.Unlock()
			}
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f, log
}

// noResolver fails every lookup: the tests use IP literals only and never
// resolve an outside name.
type noResolver struct{}

func (noResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no resolver in tests", Name: host, IsNotFound: true}
}

func newProber(t testing.TB, reg prober.Registry, f *fetch.Fetcher, c *clock, mod func(*prober.Config)) *prober.Prober {
	t.Helper()
	cfg := prober.Config{Registry: reg, Fetcher: f, Interval: 15 * time.Minute, Jitter: -1, Timeout: probertest.Timeout,
		Workers: 32, PerHost: 64, Now: c.Now, Owner: "prober-test"}
	if mod != nil {
		mod(&cfg)
	}
	p, err := prober.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
