package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/prober/probertest"
)

// demoA2APort is the fixed port of the demo's fake A2A endpoints (a taken
// port falls back to a free one).
const demoA2APort = 47083

// a2aAgent is a demo agent whose card lists interfaces served by the
// demo's fake A2A endpoints, so the catalogue shows each liveness state
// (docs/liveness.md).
type a2aAgent struct {
	slug, name, description string
	interfaces              []a2aInterface
}

type a2aInterface struct {
	endpoint          string
	behavior          probertest.Behavior
	binding, protocol string
}

var demoA2AAgents = []a2aAgent{
	{"echo-desk", "Echo Desk", "Answers A2A on both of its interfaces: the liveness probe gets a task-not-found reply from each, so the agent is answering.",
		[]a2aInterface{{"echo-rpc", probertest.JSONRPCv1, "JSONRPC", "1.0"}, {"echo-rest", probertest.RESTv1, "HTTP+JSON", "1.0"}}},
	{"legacy-concierge", "Legacy Concierge", "Its v0.3 JSON-RPC endpoint answers, but the HTTP+JSON URL on its card serves a web page: the agent is degraded.",
		[]a2aInterface{{"concierge-rpc", probertest.JSONRPCv03, "JSONRPC", "0.3"}, {"concierge-rest", probertest.HTML, "HTTP+JSON", "1.0"}}},
	{"night-shift", "Night Shift Scheduler", "Its card loads, but its A2A endpoint resets every connection: the agent is unreachable.",
		[]a2aInterface{{"night-rpc", probertest.Reset, "JSONRPC", "1.0"}}},
}

// startA2A serves the fake A2A endpoints on the demo's first address and
// adds one fleet agent per demoA2AAgents entry, its card pointing at them.
func (d *demoFleet) startA2A(log *slog.Logger) error {
	host := netip.MustParseAddrPort(d.fleet.Hosts()[0].Origin()[len("http://"):]).Addr().String()
	live, err := probertest.StartOn(host, demoA2APort)
	if err != nil {
		log.Warn("demo A2A endpoints: fixed port taken, using a free port", "port", demoA2APort, "err", err)
		if live, err = probertest.StartOn(host, 0); err != nil {
			return fmt.Errorf("demo A2A endpoints: %w", err)
		}
	}
	d.a2a = live
	hosts := d.fleet.Hosts()
	for i, a := range demoA2AAgents {
		var ifs []map[string]string
		for _, it := range a.interfaces {
			ifs = append(ifs, map[string]string{"url": live.Add(it.endpoint, it.behavior), "protocolBinding": it.binding, "protocolVersion": it.protocol})
		}
		card, err := json.MarshalIndent(map[string]any{
			"name": a.name, "description": a.description, "version": "1.0.0",
			"supportedInterfaces": ifs,
			"provider":            map[string]string{"organization": "Cardex demo", "url": "https://cardex.example/demo"},
			"capabilities":        map[string]any{"streaming": false},
			"defaultInputModes":   []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
			"skills": []map[string]any{{"id": a.slug, "name": a.name, "description": a.description, "tags": []string{"demo", "liveness"}}},
		}, "", "  ")
		if err != nil {
			return err
		}
		h, err := d.fleet.TryAdd(agentfleet.Agent{Behavior: agentfleet.Normal, Card: card, Host: hosts[i%len(hosts)],
			Path: "/a2a-demo/" + a.slug + "/.well-known/agent-card.json"})
		if err != nil {
			return fmt.Errorf("demo fleet: %w", err)
		}
		d.agents = append(d.agents, demoAgent{url: h.URL()})
	}
	return nil
}

// probeFetcher is the demo prober's client: the server's policy, but it
// resolves no name and dials only the demo's own addresses, so the sample
// cards' interfaces (real and example hosts) are never contacted: they show
// as unreachable.
func (d *demoFleet) probeFetcher(c *serveConfig, allow crawlNetwork, log *slog.Logger) (*crawler.Fetcher, error) {
	pol, err := c.policy(allow)
	if err != nil {
		return nil, err
	}
	return crawler.New(crawler.Config{
		Policy:   pol,
		Resolver: noNames{},
		CheckAddr: func(ap netip.AddrPort) error {
			if !slices.ContainsFunc(d.nets, func(p netip.Prefix) bool { return p.Contains(ap.Addr().Unmap()) }) {
				return fmt.Errorf("%w: the demo probes only its own agents (%s)", crawler.ErrReservedAddress, ap)
			}
			return pol.CheckAddr(ap)
		},
		Logger: log,
	})
}

// noNames resolves nothing.
type noNames struct{}

func (noNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "the demo resolves no names", Name: host, IsNotFound: true}
}
