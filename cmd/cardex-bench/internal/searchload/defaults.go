package searchload

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
)

// With -defaults the server runs as a user runs it: the crawler and the
// prober at their defaults (no --crawl-tick, no --probe-interval 0). The
// agents are approved through the bulk API, which makes every one of them
// due for its first probe at once, and the unique queries run twice:
// right after the approval, while the first probe round and the index
// catch-up run ("after-approval"), and once the server is in steady state
// ("steady": every agent indexed, no crawl due, the first probe round
// done). Each run reports the probes the server made during it.

// Phases of a -defaults measurement.
const (
	phaseAfterApproval = "after-approval"
	phaseSteady        = "steady"
)

// bulkMax is the bulk API's limit of items per request (docs/api.md).
const bulkMax = 1000

// a2aHosts are fake A2A endpoints for the corpus cards' interfaces, one
// server per fleet address, so each agent's interfaces are on its own
// host and only loopback is ever dialled: the corpus cards name hosts
// under example.com, which a probe would otherwise try to resolve.
type a2aHosts struct {
	servers    map[string]*agentfleet.A2AServer // fleet origin → its endpoints
	caFile     string                           // their gRPC CAs, for --ca-file
	interfaces int                              // interfaces pointed at them
}

// startA2AHosts starts one A2A server per fleet address, each with an
// endpoint per binding and protocol version, and writes their gRPC CAs to
// a PEM file in dir for the server's --ca-file.
func startA2AHosts(hosts []*agentfleet.Host, dir string) (*a2aHosts, error) {
	a := &a2aHosts{servers: map[string]*agentfleet.A2AServer{}, caFile: filepath.Join(dir, "a2a-ca.pem")}
	var cas []byte
	for _, h := range hosts {
		ap, err := netip.ParseAddrPort(strings.TrimPrefix(h.Origin(), "http://"))
		if err != nil {
			a.Close()
			return nil, err
		}
		srv, err := agentfleet.StartA2A(ap.Addr().String(), 0, 0)
		if err != nil {
			a.Close()
			return nil, err
		}
		a.servers[h.Origin()] = srv
		for _, b := range []agentfleet.A2ABehavior{agentfleet.A2AJSONRPCv1, agentfleet.A2AJSONRPCv03, agentfleet.A2ARESTv1, agentfleet.A2ARESTv03} {
			srv.Add(string(b), b)
		}
		cas = append(cas, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.GRPCCA().Raw})...)
	}
	if err := os.WriteFile(a.caFile, cas, 0o600); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// answer points c's interfaces at the endpoints on h's address that answer
// its binding and protocol version.
func (a *a2aHosts) answer(h *agentfleet.Host, c *agentcard.Card) {
	srv := a.servers[h.Origin()]
	for i, it := range c.Interfaces {
		b := agentfleet.A2AJSONRPCv03
		switch {
		case it.Binding == "GRPC":
			c.Interfaces[i].URL = srv.GRPCURL()
			a.interfaces++
			continue
		case it.Binding == "HTTP+JSON" && strings.HasPrefix(it.ProtocolVersion, "1"):
			b = agentfleet.A2ARESTv1
		case it.Binding == "HTTP+JSON":
			b = agentfleet.A2ARESTv03
		case strings.HasPrefix(it.ProtocolVersion, "1"):
			b = agentfleet.A2AJSONRPCv1
		}
		c.Interfaces[i].URL = srv.URL() + "/" + string(b)
		a.interfaces++
	}
}

// Close stops every A2A server.
func (a *a2aHosts) Close() {
	for _, s := range a.servers {
		s.Close()
	}
}

// approveBulk approves every agent through POST /api/v1/agents/bulk, at
// most bulkMax a request, at the version the crawler fetched first. An
// agent not crawled yet is refused and asked for again after the rest.
func approveBulk(ctx context.Context, c *http.Client, s *bench.Server, ids []string, st *setupTimes, log io.Writer) error {
	start := time.Now()
	type item struct {
		ID         string `json:"id"`
		VersionSeq int64  `json:"versionSeq"`
	}
	var out struct {
		Results []struct {
			ID string `json:"id"`
			OK bool   `json:"ok"`
		} `json:"results"`
	}
	for pending := ids; len(pending) > 0; {
		var again []string
		for len(pending) > 0 {
			n := min(len(pending), bulkMax)
			items := make([]item, n)
			for i, id := range pending[:n] {
				items[i] = item{ID: id, VersionSeq: 1}
			}
			out.Results = nil
			code, err := call(ctx, c, http.MethodPost, s.Base+"/api/v1/agents/bulk", s.Token,
				map[string]any{"action": "approve", "reason": "cardex-bench search -defaults", "items": items}, &out)
			switch {
			case err != nil:
				return fmt.Errorf("bulk approve: %w", err)
			case code == http.StatusServiceUnavailable:
				if err := pause(ctx, time.Second); err != nil {
					return err
				}
				continue // the same items again
			case code != http.StatusOK || len(out.Results) != n:
				return fmt.Errorf("bulk approve: status %d, %d results for %d items", code, len(out.Results), n)
			}
			for _, r := range out.Results {
				if !r.OK {
					again = append(again, r.ID)
				}
			}
			pending = pending[n:]
		}
		if pending = again; len(pending) > 0 {
			if err := pause(ctx, 200*time.Millisecond); err != nil {
				return fmt.Errorf("bulk approve (%d not crawled yet): %w", len(pending), err)
			}
		}
	}
	st.CrawlApprove = time.Since(start)
	fmt.Fprintf(log, "crawled and approved %d agents through the bulk API in %s\n", len(ids), st.CrawlApprove.Round(time.Second))
	return nil
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// probes is how many liveness probes the server has made (0 before the
// first, when /metrics has no series yet).
func probes(ctx context.Context, c *http.Client, s *bench.Server) (float64, error) {
	m, err := bench.ReadMetrics(ctx, c, s.Base+"/metrics", "cardex_probes_total")
	if errors.Is(err, bench.ErrNoMetric) {
		return 0, nil
	}
	return m["cardex_probes_total"], err
}

// waitSteady waits until every agent is indexed, no crawl is due, the
// index has applied every change and merged what the round left (no
// compaction due: the merge into one segment that follows a probe round
// costs a 100,000-agent server seconds of CPU, docs/benchmarks.md "Under
// real load"), and the first probe round is done: the
// probes made reach the interfaces the catalogue declares, or stop growing
// for 10 s once started (a probe the prober skips, docs/liveness.md "What
// is probed"). With several replicas each must have listed every agent
// and caught up with its own index, and the probes are theirs together
// (each probes the agents it claims).
func waitSteady(ctx context.Context, c *http.Client, servers []*bench.Server, agents, interfaces int, st *setupTimes, log io.Writer) error {
	if err := waitIndexed(ctx, c, servers, agents, st, log); err != nil {
		return err
	}
	start := time.Now()
	var last float64
	flatSince := time.Now()
	per := make([]float64, len(servers))
	for {
		var due, lag, n, merge float64
		for i, s := range servers {
			m, err := bench.ReadMetrics(ctx, c, s.Base+"/metrics", "cardex_crawl_due_backlog", "cardex_index_lag_changes",
				"cardex_index_compaction_due")
			if err != nil {
				return fmt.Errorf("replica %d: %w", i+1, err)
			}
			if per[i], err = probes(ctx, c, s); err != nil {
				return fmt.Errorf("replica %d: %w", i+1, err)
			}
			// The due backlog is the database's, the same on every
			// replica (-1 when a replica failed to count it); the index
			// lag is each replica's own.
			if d := m["cardex_crawl_due_backlog"]; d != 0 && due == 0 {
				due = d
			}
			lag, n = lag+m["cardex_index_lag_changes"], n+per[i]
			merge += max(0, m["cardex_index_compaction_due"])
		}
		if n != last {
			last, flatSince = n, time.Now()
		}
		quiet := due == 0 && lag == 0 && merge == 0
		if quiet && (n >= float64(interfaces) || n > 0 && time.Since(flatSince) >= 10*time.Second) {
			break
		}
		if err := pause(ctx, time.Second); err != nil {
			return fmt.Errorf("waiting for steady state (%.0f of %d interfaces probed, %.0f crawls due, indexes %.0f changes behind, %.0f merges due): %w",
				n, interfaces, due, lag, merge, err)
		}
	}
	st.Steady = time.Since(start)
	if len(servers) > 1 {
		for i, n := range per {
			fmt.Fprintf(log, "replica %d steady: every agent listed, index caught up, %.0f probes\n", i+1, n)
		}
	}
	fmt.Fprintf(log, "steady state %s later: %.0f probes of %d interfaces\n", st.Steady.Round(time.Second), last, interfaces)
	return nil
}

// waitCrawled waits until every agent has been crawled once: no crawl due
// and none in flight on any replica. Crawled is the time from start (the
// first submission) until then.
func waitCrawled(ctx context.Context, c *http.Client, servers []*bench.Server, start time.Time, st *setupTimes, log io.Writer) error {
	for {
		due, inFlight := 0.0, 0.0
		for _, s := range servers {
			m, err := bench.ReadMetrics(ctx, c, s.Base+"/metrics", "cardex_crawl_due_backlog", "cardex_crawl_in_flight")
			if err != nil {
				return err
			}
			due, inFlight = m["cardex_crawl_due_backlog"], inFlight+m["cardex_crawl_in_flight"]
		}
		if due == 0 && inFlight == 0 {
			break
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for the first crawl (%.0f due, %.0f in flight): %w", due, inFlight, err)
		}
	}
	st.Crawled = time.Since(start)
	fmt.Fprintf(log, "every agent crawled once %s after the first submission\n", st.Crawled.Round(time.Second))
	return nil
}

// approveSingle approves ids one request each, submitClients at once, at
// the version the crawler fetched first.
func approveSingle(ctx context.Context, c *http.Client, s *bench.Server, ids []string, st *setupTimes, log io.Writer) error {
	if len(ids) == 0 {
		return nil
	}
	start := time.Now()
	if err := parallel(ctx, submitClients, len(ids), func(i int) error {
		for {
			code, err := call(ctx, c, http.MethodPost, s.Base+"/api/v1/agents/"+ids[i]+"/approve", s.Token, map[string]int64{"versionSeq": 1}, nil)
			switch {
			case err != nil:
				return err
			case code == http.StatusOK:
				return nil
			case code == http.StatusServiceUnavailable:
				if err := pause(ctx, time.Second); err != nil {
					return err
				}
			default:
				return fmt.Errorf("approve %s: status %d", ids[i], code)
			}
		}
	}); err != nil {
		return err
	}
	st.ApprovedSingle, st.ApproveSingle = len(ids), time.Since(start)
	fmt.Fprintf(log, "approved %d agents one request each in %s\n", len(ids), st.ApproveSingle.Round(time.Second))
	return nil
}
