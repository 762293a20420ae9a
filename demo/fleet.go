package demo

import (
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/verifier"
)

// Demo fleet layout. The agents live on 127.0.0.2 and up, not on
// 127.0.0.1 where the server usually listens, so the demo's network
// allowance (these addresses only) never lets a submission reach the
// server itself. Fixed ports keep card URLs, and so agent identities,
// stable across demo restarts; a taken port falls back to a free one.
const (
	demoBaseAddr   = "127.0.0.2"
	demoHosts      = 4
	demoFleetPort  = 47080
	demoFlakyPort  = 47081
	demoGenerated  = 6 // signed generated agents, verified against their origin's key set
	demoCardFormat = "2.%d.0"
)

// demoFleet is the demo's agents: an agentfleet fleet plus one listener
// whose agents turn failing (500) and gone (404) once they are approved.
type demoFleet struct {
	fleet   *agentfleet.Fleet
	a2a     *agentfleet.A2AServer // the A2A endpoints every agent's interfaces point at (a2a.go)
	flaky   *flakyAgents
	live    *liveAgents  // live.go
	catalog *catalogHost // catalog.go
	ports   Ports        // where the agents listen, kept in the demo marker
	agents  []demoAgent
	nets    []netip.Prefix
	// self is the agent whose host claims itself (claim.go): it is
	// submitted with the publisher token of that claim, not by the demo
	// admin.
	self     *agentfleet.AgentHandle
	selfHost *agentfleet.Host
}

// demoAgent is one agent to submit; flaky ones break after approval.
type demoAgent struct {
	url   string
	flaky flakyMode
	live  liveMode
}

func signCard(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
}

// startDemoFleet starts the demo's agents on the ports a previous start
// of this demo recorded (want), else on the usual ports, else on other
// free ones; d.ports says which, for the demo marker.
func startDemoFleet(log *slog.Logger, want Ports) (*demoFleet, error) {
	opts := agentfleet.Options{Hosts: demoHosts, BaseAddr: demoBaseAddr, Signer: signCard}
	var fleet *agentfleet.Fleet
	var err error
	for i, port := range fleetPortCandidates(want.Fleet) {
		opts.Port = port
		if fleet, err = agentfleet.New(opts); err == nil {
			if i > 0 {
				log.Info("demo fleet: its usual port is taken (another demo?), using another", "port", port)
			}
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("demo fleet: %w", err)
	}
	d := &demoFleet{fleet: fleet}
	d.ports.Fleet = opts.Port
	if err := d.startA2AServer(want, log); err != nil {
		fleet.Close()
		return nil, err
	}
	if err := d.addAgents(); err != nil {
		d.a2a.Close()
		fleet.Close()
		return nil, err
	}
	if d.flaky, err = startFlaky(fleet.Hosts()[0], or(want.Flaky, demoFlakyPort), d.answer, log); err != nil {
		d.a2a.Close()
		fleet.Close()
		return nil, err
	}
	if err := d.addA2AAgents(); err != nil {
		d.a2a.Close()
		d.flaky.close()
		fleet.Close()
		return nil, err
	}
	d.agents = append(d.agents, demoAgent{url: d.flaky.url(flakyFailing), flaky: flakyFailing},
		demoAgent{url: d.flaky.url(flakyGone), flaky: flakyGone})
	if d.live, err = startLive(fleet.Hosts()[0], or(want.Live, demoLivePort), time.Now, d.answer, log); err != nil {
		d.a2a.Close()
		d.flaky.close()
		fleet.Close()
		return nil, err
	}
	for _, m := range liveModes {
		d.agents = append(d.agents, demoAgent{url: d.live.url(m), live: m})
	}
	if d.catalog, err = startCatalogHost(fleet.Hosts()[1%len(fleet.Hosts())], fleet.Hosts()[2%len(fleet.Hosts())],
		or(want.Catalog, demoCatalogPort), d.a2a, d.answeringOn, log); err != nil {
		d.live.close()
		d.a2a.Close()
		d.flaky.close()
		fleet.Close()
		return nil, err
	}
	d.agents = append(d.agents, demoAgent{url: d.catalog.url()})
	d.ports.Flaky, d.ports.Live, d.ports.Catalog = portOf(d.flaky.origin), portOf(d.live.origin), portOf(d.catalog.origin)
	for _, h := range fleet.Hosts() {
		a := netip.MustParseAddrPort(h.Origin()[len("http://"):]).Addr()
		d.nets = append(d.nets, netip.PrefixFrom(a, 32))
	}
	return d, nil
}

// addAgents adds the embedded sample cards, signed generated agents, one
// agent whose card carries a signature by a key its origin has since
// removed beside one by its current key (key rotation), and one tampered.
func (d *demoFleet) addAgents() error {
	names, err := fs.Glob(demoCards, "demodata/*.json")
	if err != nil {
		return err
	}
	sort.Strings(names)
	hosts := d.fleet.Hosts()
	add := func(a agentfleet.Agent) error {
		h, err := d.fleet.TryAdd(a)
		if err != nil {
			return fmt.Errorf("demo fleet: %w", err)
		}
		d.agents = append(d.agents, demoAgent{url: h.URL()})
		return nil
	}
	for i, name := range names {
		card, err := demoCards.ReadFile(name)
		if err != nil {
			return err
		}
		// Each sample gets its own path so several can share a host.
		base := path.Base(name[:len(name)-len(".json")])
		if card, err = d.answering(card, "samples/"+demoSlug(base), demoSampleNames[base]); err != nil {
			return err
		}
		p := "/samples/" + base + "/.well-known/agent-card.json"
		if err := add(agentfleet.Agent{Behavior: agentfleet.Normal, Card: card, Host: hosts[i%len(hosts)], Path: p}); err != nil {
			return err
		}
	}
	for n := range demoGenerated {
		h := hosts[n%len(hosts)]
		card, err := d.answer(agentfleet.GenerateCard(100+n, h.Origin(), fmt.Sprintf(demoCardFormat, n)), fmt.Sprintf("generated/%d", n))
		if err != nil {
			return err
		}
		if err := add(agentfleet.Agent{Behavior: agentfleet.Signed, Card: card, Host: h}); err != nil {
			return err
		}
	}
	// Rotation: signed first with a key the origin no longer publishes,
	// then (by the fleet) with the host's published key.
	old, err := agentfleet.NewSigningKey()
	if err != nil {
		return err
	}
	h := hosts[1%len(hosts)]
	card, err := d.answer(agentfleet.GenerateCard(200, h.Origin(), "3.0.0"), "rotated")
	if err != nil {
		return err
	}
	if card, err = signCard(card, old, "", h.JWKSURL()); err != nil {
		return err
	}
	if err := add(agentfleet.Agent{Behavior: agentfleet.Signed, Card: card, Host: h}); err != nil {
		return err
	}
	if card, err = d.answer(agentfleet.GenerateCard(201, hosts[2%len(hosts)].Origin(), "1.4.2"), "tampered"); err != nil {
		return err
	}
	if err := add(agentfleet.Agent{Behavior: agentfleet.Tampered, Card: card, Host: hosts[2%len(hosts)]}); err != nil {
		return err
	}
	d.selfHost = hosts[len(hosts)-1]
	if card, err = d.answer(agentfleet.GenerateCard(300, d.selfHost.Origin(), "1.0.0"), "self"); err != nil {
		return err
	}
	d.self, err = d.fleet.TryAdd(agentfleet.Agent{Behavior: agentfleet.Signed, Host: d.selfHost, Path: "/self/.well-known/agent-card.json", Card: card})
	if err != nil {
		return fmt.Errorf("demo fleet: %w", err)
	}
	return nil
}

// answer is d.answering keeping the card's name.
func (d *demoFleet) answer(card []byte, slug string) ([]byte, error) {
	return d.answering(card, slug, "")
}

// cardAnswer points a card's interfaces at the demo's A2A endpoints
// (demoFleet.answer); nil keeps the card as it is.
type cardAnswer func(card []byte, slug string) ([]byte, error)

func (a cardAnswer) apply(card []byte, slug string) ([]byte, error) {
	if a == nil {
		return card, nil
	}
	return a(card, slug)
}

// demoSlug makes a name fit for a URL path segment.
func demoSlug(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, s), "-")
}

// demoSampleNames give the samples that share a name (the spec's
// GeoSpatial Route Planner in each version and SDK test, two SDKs'
// signing vectors, two currency agents) names of their own, saying where
// each comes from, so no two demo agents share a name.
var demoSampleNames = map[string]string{
	"A2A_v0.1.0_docs_specification.md_sample-agent-card":                                "GeoSpatial Route Planner Agent (A2A v0.1 sample)",
	"A2A_v0.2.6_docs_specification.md_5.6-sample-agent-card":                            "GeoSpatial Route Planner Agent (A2A v0.2.6 sample)",
	"A2A_v0.3.0_docs_specification.md_5.7-sample-agent-card":                            "GeoSpatial Route Planner Agent (A2A v0.3 sample)",
	"A2A_v1.0.0_docs_specification.md_8.5-sample-agent-card":                            "GeoSpatial Route Planner Agent (A2A v1.0 sample)",
	"GENERATED_a2a-go-pr368_a2acrypto.Sign_spec-8.5-sample-v1-goform_SIGNED-ES256":      "GeoSpatial Route Planner Agent (signed by a2a-go)",
	"GENERATED_a2a-js-1.3.0_generateAgentCardSignature_spec-8.5-sample-v1_SIGNED-ES256": "GeoSpatial Route Planner Agent (signed by a2a-js)",
	"a2a-go_a2a_json_test.go_TestAgentCardParsing-v1.0":                                 "GeoSpatial Route Planner Agent (a2a-go v1.0 test)",
	"a2a-go_a2acompat_a2av0_agentcard_test.go_oldCardJSON-v0.3":                         "GeoSpatial Route Planner Agent (a2a-go v0.3 test)",
	"GENERATED_a2a-go-pr368_a2acrypto.Sign_edge-v1-goform_SIGNED-ES256":                 "Café <Agent> & Co (signed by a2a-go)",
	"GENERATED_a2a-js-1.3.0_generateAgentCardSignature_edge-v1_SIGNED-ES256":            "Café <Agent> & Co (signed by a2a-js)",
	"a2a-samples_samples_python_agents_adk_skills_agent_src_skills_agent_agent_card":    "Currency Conversion Agent (ADK skills sample)",
}

func (d *demoFleet) Close() {
	d.catalog.close()
	d.a2a.Close()
	d.live.close()
	d.flaky.close()
	d.fleet.Close()
}

// flakyMode is how a flaky agent answers.
type flakyMode int

const (
	flakyNone    flakyMode = iota
	flakyFailing           // 500 once broken
	flakyGone              // 404 once broken: withdrawn from its host
)

// flakyAgents serves two cards that answer normally until break is
// called, so the demo shows approved agents whose health is failing and
// gone (an agent is approved only once a version was fetched).
type flakyAgents struct {
	origin string
	srv    *http.Server
	broken atomic.Bool
	cards  map[flakyMode][]byte
}

func startFlaky(h *agentfleet.Host, port int, answer cardAnswer, log *slog.Logger) (*flakyAgents, error) {
	ln, err := listenDemo(h, port)
	if err != nil {
		return nil, err
	}
	f := &flakyAgents{origin: "http://" + ln.Addr().String()}
	f.cards = map[flakyMode][]byte{}
	// Their cards fail and go; their A2A endpoints keep answering.
	for m, card := range map[flakyMode][]byte{
		flakyFailing: agentfleet.GenerateCard(310, f.origin, "0.9.1"),
		flakyGone:    agentfleet.GenerateCard(311, f.origin, "0.3.0"),
	} {
		if f.cards[m], err = answer.apply(card, fmt.Sprintf("flaky/%d", m)); err != nil {
			ln.Close()
			return nil, err
		}
	}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := f.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("demo fleet: flaky agents stopped", "err", err)
		}
	}()
	return f, nil
}

func (f *flakyAgents) url(m flakyMode) string {
	return fmt.Sprintf("%s/flaky/%d/.well-known/agent-card.json", f.origin, m)
}

func (f *flakyAgents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for m, card := range f.cards {
		if r.URL.Path != f.url(m)[len(f.origin):] {
			continue
		}
		switch {
		case !f.broken.Load():
			w.Header().Set("Content-Type", "application/json")
			w.Write(card)
		case m == flakyFailing:
			http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
		return
	}
	http.NotFound(w, r)
}

func (f *flakyAgents) close() { f.srv.Close() }

// fleetPortCandidates are the ports to try for the fleet, which needs one
// port free on every fleet address: the recorded one (or the usual one),
// then a few others from the dynamic range.
func fleetPortCandidates(want int) []int {
	if want == 0 {
		want = demoFleetPort
	}
	out := []int{want}
	for range 16 {
		out = append(out, 49152+rand.IntN(16000))
	}
	return out
}

// listenDemo listens on port of h's address, or on a free port when that
// one is taken.
func listenDemo(h *agentfleet.Host, port int) (net.Listener, error) {
	host := netip.MustParseAddrPort(h.Origin()[len("http://"):]).Addr()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(host, uint16(port)).String())
	if err != nil {
		if ln, err = net.Listen("tcp", netip.AddrPortFrom(host, 0).String()); err != nil {
			return nil, fmt.Errorf("demo fleet: %w", err)
		}
	}
	return ln, nil
}

func portOf(origin string) int {
	return int(netip.MustParseAddrPort(origin[len("http://"):]).Port())
}

func or[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}
