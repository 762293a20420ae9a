package demo

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// The fixed ports of the demo's fake A2A endpoints (HTTP, and TLS for
// gRPC) on its first address; a taken port falls back to a free one, and
// the demo marker keeps what it got so the cards stay the same on a
// restart.
const (
	demoA2APort  = 47083
	demoGRPCPort = 47084
)

// Every demo agent answers A2A on each interface its card declares
// (docs/operator-guide.md "The demo"): each card is served with its
// interface URLs pointing at an endpoint of the demo's A2A server that
// answers the liveness probe the way that binding and protocol version
// do (docs/liveness.md), so the catalogue shows the agents answering
// through the real prober. Only the agents below show the other states,
// on purpose.

// a2aAgent is a demo agent whose card lists interfaces served by the
// demo's fake A2A endpoints with a chosen behaviour, so the catalogue
// shows each liveness state (docs/liveness.md).
type a2aAgent struct {
	slug, name, description string
	interfaces              []a2aInterface
}

type a2aInterface struct {
	endpoint          string
	behavior          agentfleet.A2ABehavior
	binding, protocol string
}

var demoA2AAgents = []a2aAgent{
	{"echo-desk", "Echo Desk", "Answers A2A on both of its interfaces: the liveness probe gets a task-not-found reply from each, so the agent is answering.",
		[]a2aInterface{{"echo-rpc", agentfleet.A2AJSONRPCv1, "JSONRPC", "1.0"}, {"echo-rest", agentfleet.A2ARESTv1, "HTTP+JSON", "1.0"}}},
	{"legacy-concierge", "Legacy Concierge", "Its v0.3 JSON-RPC endpoint answers, but the HTTP+JSON URL on its card serves a web page: the agent is degraded.",
		[]a2aInterface{{"concierge-rpc", agentfleet.A2AJSONRPCv03, "JSONRPC", "0.3"}, {"concierge-rest", agentfleet.A2AHTML, "HTTP+JSON", "1.0"}}},
	{"night-shift", "Night Shift Scheduler", "Its card loads, but its A2A endpoint resets every connection: the agent is unreachable.",
		[]a2aInterface{{"night-rpc", agentfleet.A2AReset, "JSONRPC", "1.0"}}},
}

// NotAnswering are the demo agents (by slug) that do not answer A2A, on
// purpose; every other one answers.
var NotAnswering = []string{"legacy-concierge", "night-shift"}

// startA2AServer serves the fake A2A endpoints on the address after the
// fleet's (127.0.0.6), on the ports a previous start recorded (want), else
// the usual ones, else free ones. Probes and fetches share a cap per host
// (docs/liveness.md): on an address of their own, the probes of every
// agent's interfaces never hold up the crawls the demo waits for.
func (d *demoFleet) startA2AServer(want Ports, log *slog.Logger) error {
	hosts := d.fleet.Hosts()
	addr := netip.MustParseAddrPort(hosts[len(hosts)-1].Origin()[len("http://"):]).Addr().Next()
	host := addr.String()
	srv, err := agentfleet.StartA2A(host, or(want.A2A, demoA2APort), or(want.GRPC, demoGRPCPort))
	if err != nil {
		log.Info("demo A2A endpoints: their usual ports are taken (another demo?), using free ports", "err", err)
		if srv, err = agentfleet.StartA2A(host, 0, 0); err != nil {
			return fmt.Errorf("demo A2A endpoints: %w", err)
		}
	}
	d.a2a = srv
	d.nets = append(d.nets, netip.PrefixFrom(addr, 32))
	d.ports.A2A, d.ports.GRPC = portOf(srv.URL()), int(netip.MustParseAddrPort(srv.GRPCURL()[len("https://"):]).Port())
	return nil
}

// addA2AAgents adds one fleet agent per demoA2AAgents entry, its card
// pointing at endpoints with the entry's behaviours.
func (d *demoFleet) addA2AAgents() error {
	hosts := d.fleet.Hosts()
	for i, a := range demoA2AAgents {
		var ifs []map[string]string
		for _, it := range a.interfaces {
			ifs = append(ifs, map[string]string{"url": d.a2a.Add(it.endpoint, it.behavior), "protocolBinding": it.binding, "protocolVersion": it.protocol})
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

// answering returns card with every A2A interface URL it declares
// (supportedInterfaces, and a v0.x card's url and additionalInterfaces)
// replaced by an endpoint of the demo's A2A server that answers that
// binding and version, and with its name replaced when name is set. Every
// other byte is kept (member order, spacing, escapes), so a published
// sample still reads as published. slug names the card's endpoints. A
// signature the card carries no longer covers the new bytes; the demo's
// samples are signed by keys no demo origin publishes, so they show as
// untrusted either way (docs/verification.md).
func (d *demoFleet) answering(card []byte, slug, name string) ([]byte, error) {
	return d.answeringOn(d.a2a.URL(), card, slug, name)
}

// answeringOn is answering with the HTTP endpoints on origin, a server
// that hands their paths to the demo's A2A server (the catalog host, whose
// inline card's endpoints must be on its own host).
func (d *demoFleet) answeringOn(origin string, card []byte, slug, name string) ([]byte, error) {
	parsed, err := agentcard.Parse(card, agentcard.Options{})
	if err != nil {
		return nil, fmt.Errorf("demo card %s: %w", slug, err)
	}
	// Each URL gets the behaviour of the first interface declaring it; a
	// JSON-RPC URL declared for v1.0 and v0.3 answers v1.0, which a v0.3
	// probe reaches on its retry with the other method (docs/liveness.md).
	endpoints := map[string]string{}
	for i, it := range parsed.Card.Interfaces {
		if _, ok := endpoints[it.URL]; ok {
			continue
		}
		v1 := strings.HasPrefix(it.ProtocolVersion, "1")
		var b agentfleet.A2ABehavior
		switch it.Binding {
		case "GRPC":
			endpoints[it.URL] = d.a2a.GRPCURL()
			continue
		case "JSONRPC":
			b = agentfleet.A2AJSONRPCv03
			if v1 {
				b = agentfleet.A2AJSONRPCv1
			}
		case "HTTP+JSON":
			b = agentfleet.A2ARESTv03
			if v1 {
				b = agentfleet.A2ARESTv1
			}
		default:
			continue // a binding Cardex does not probe
		}
		endpoints[it.URL] = d.a2a.AddOn(origin, fmt.Sprintf("a2a/%s/%d", slug, i), b)
	}
	return rewriteJSON(card, func(path []string, v string) (string, bool) {
		switch strings.Join(path, "/") {
		case "name":
			return name, name != ""
		case "url", "supportedInterfaces/[]/url", "additionalInterfaces/[]/url":
			u, ok := endpoints[v]
			return u, ok
		}
		return "", false
	})
}

// rewriteJSON returns data with the string values replace swaps, every
// other byte as it was. path holds the member names from the root, "[]"
// for an array element.
func rewriteJSON(data []byte, replace func(path []string, v string) (string, bool)) ([]byte, error) {
	type frame struct {
		object, wantKey bool
		name            string
	}
	var stack []frame
	path := func() []string {
		p := make([]string, len(stack))
		for i, f := range stack {
			p[i] = "[]"
			if f.object {
				p[i] = f.name
			}
		}
		return p
	}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var out bytes.Buffer
	copied := 0
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			stack[n-1].name, stack[n-1].wantKey = tok.(string), false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if s, ok := tok.(string); ok {
			if repl, ok := replace(path(), s); ok {
				// The literal is what follows the separators before it.
				raw := data[before:dec.InputOffset()]
				start := int(before) + len(raw) - len(bytes.TrimLeft(raw, " \t\r\n:,"))
				var lit bytes.Buffer
				enc := json.NewEncoder(&lit)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(repl); err != nil {
					return nil, err
				}
				out.Write(data[copied:start])
				out.Write(bytes.TrimSuffix(lit.Bytes(), []byte("\n")))
				copied = int(dec.InputOffset())
			}
		}
		valueDone()
	}
	out.Write(data[copied:])
	return out.Bytes(), nil
}

// probeFetcher is the demo prober's client: the server's policy pol, trusting
// the demo's gRPC certificate, but it resolves no name and dials only the
// demo's own addresses.
func (d *demoFleet) probeFetcher(pol fetch.Policy, log *slog.Logger) (*fetch.Fetcher, error) {
	if pol.RootCAs == nil {
		pol.RootCAs = x509.NewCertPool()
	}
	pol.RootCAs.AddCert(d.a2a.GRPCCA())
	return fetch.New(fetch.Config{
		Policy:   pol,
		Resolver: noNames{},
		CheckAddr: func(ap netip.AddrPort) error {
			if !slices.ContainsFunc(d.nets, func(p netip.Prefix) bool { return p.Contains(ap.Addr().Unmap()) }) {
				return fmt.Errorf("%w: the demo probes only its own agents (%s)", fetch.ErrReservedAddress, ap)
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
