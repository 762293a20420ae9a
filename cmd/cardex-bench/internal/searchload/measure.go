package searchload

import (
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// measure prepares the catalogue and runs every workload.
func measure(ctx context.Context, cfg *Config, log io.Writer) (rep *report, err error) {
	rep = &report{Agents: cfg.Agents, Store: storeSQLite, Replicas: cfg.Replicas, Started: time.Now().UTC(), Machine: machine()}
	tmp, err := os.MkdirTemp("", "cardex-bench-search-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	data := cfg.Data
	if data == "" {
		data = tmp
	}
	bin := cfg.Cardex
	if bin == "" {
		fmt.Fprintln(log, "building cmd/cardex")
		if bin, err = bench.Build(ctx, tmp, false); err != nil {
			return nil, err
		}
	}
	// The run's own database, dropped once every replica has stopped (the
	// replicas' Stop is deferred later, so runs first).
	dbURL := ""
	if cfg.DatabaseURL != "" {
		db, err := bench.CreateDatabase(ctx, cfg.DatabaseURL)
		if err != nil {
			return nil, err
		}
		rep.Store, rep.Database, dbURL = storePostgres, db.Name, db.URL
		fmt.Fprintf(log, "created database %s\n", db.Name)
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := db.Drop(dctx); derr != nil {
				err = errors.Join(err, derr)
				return
			}
			fmt.Fprintf(log, "dropped database %s\n", db.Name)
		}()
	}
	// A populated catalogue was crawled by an earlier run: its agents are
	// not due again during a run, so no fleet is needed.
	urls := make([]string, cfg.Agents)
	var a2a *a2aHosts
	if !cfg.Populated {
		fmt.Fprintf(log, "starting a fleet of %d agents on %d loopback addresses\n", cfg.Agents, cfg.Hosts)
		a2aDir := ""
		if cfg.Defaults {
			a2aDir = tmp
		}
		fleet, a, u, err := startFleet(cfg, a2aDir)
		if err != nil {
			return nil, err
		}
		defer fleet.Close()
		if a != nil {
			defer a.Close()
		}
		a2a, urls = a, u
	}
	// One replica after the other: the first migrates the new database.
	rep.Defaults = cfg.Defaults
	var servers []*bench.Server
	for i := range cfg.Replicas {
		var s *bench.Server
		switch {
		case dbURL != "":
			dir := filepath.Join(tmp, fmt.Sprintf("replica-%d", i+1))
			if err := os.Mkdir(dir, 0o700); err != nil {
				return nil, err
			}
			s, err = bench.StartOn(ctx, bin, dir, dbURL, "--ca-file", a2a.caFile)
		case cfg.Defaults:
			s, err = bench.Start(ctx, bin, data, "--ca-file", a2a.caFile)
		default:
			s, err = startServer(ctx, bin, data)
		}
		if err != nil {
			return nil, fmt.Errorf("replica %d: %w", i+1, err)
		}
		defer s.Stop()
		servers = append(servers, s)
	}
	setupCtx, cancel := context.WithTimeout(ctx, cfg.Setup)
	defer cancel()
	gen := newQueryGen(cfg.Seed, cfg.Agents)
	unique := func() string {
		q, _ := gen.next()
		return q
	}
	phase := ""
	if cfg.Defaults {
		if err := afterApproval(ctx, setupCtx, cfg, servers, a2a, urls, unique, rep, log); err != nil {
			return rep, err
		}
		phase = phaseSteady
	} else if rep.Setup, err = populate(setupCtx, servers[0], urls, cfg.Populated, log); err != nil {
		return rep, err
	}
	cancel()

	repeated := make([]string, 0, cfg.Repeated)
	for len(repeated) < cfg.Repeated {
		q, ok := gen.next()
		if !ok {
			break
		}
		repeated = append(repeated, q)
	}
	var turn atomic.Int64
	again := func() string { return repeated[int(turn.Add(1)-1)%len(repeated)] }
	for _, clients := range cfg.Clients {
		fmt.Fprintf(log, "unique queries, %d clients%s, %s\n", clients, perReplica(servers), cfg.Duration)
		r, err := runLoad(ctx, servers, "unique", clients, cfg.Duration, unique)
		r.Phase = phase
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	// One pass over the list fills each server's cache, then the runs.
	fmt.Fprintf(log, "warming %d repeated queries\n", len(repeated))
	c := &http.Client{Timeout: time.Minute}
	for _, s := range servers {
		if err := warm(ctx, c, s, repeated); err != nil {
			return rep, err
		}
	}
	for _, clients := range cfg.Clients {
		fmt.Fprintf(log, "repeated queries, %d clients%s, %s\n", clients, perReplica(servers), cfg.Duration)
		r, err := runLoad(ctx, servers, "repeated", clients, cfg.Duration, again)
		r.Phase = phase
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	for i, s := range servers {
		now, err := sample(ctx, c, s)
		if err != nil {
			return rep, err
		}
		rep.RSSBytes += now.rss
		rep.Probes += now.probes
		if len(servers) > 1 {
			rep.ReplicaTotals = append(rep.ReplicaTotals, replicaTotal{Replica: i + 1, RSSBytes: now.rss, Probes: now.probes})
		}
	}
	if cfg.Reindex {
		// Each replica has its own index: the rebuild timed is the first
		// one's.
		s := servers[0]
		fmt.Fprintln(log, "rebuilding the index")
		cpu0, _, _ := bench.ProcStat(s.Cmd.Process.Pid)
		start := time.Now()
		var out struct {
			Status string `json:"status"`
		}
		code, err := call(ctx, &http.Client{Timeout: 30 * time.Minute}, http.MethodPost, s.Base+"/api/v1/admin/reindex", s.Token, map[string]any{}, &out)
		if err != nil || code != http.StatusOK {
			return rep, fmt.Errorf("reindex: status %d, %v", code, err)
		}
		rep.Reindex = time.Since(start).Seconds()
		cpu1, _, _ := bench.ProcStat(s.Cmd.Process.Pid)
		rep.ReindexCPU = (cpu1 - cpu0).Seconds()
	}
	for i, s := range servers {
		select {
		case <-s.Exited:
			return rep, fmt.Errorf("cardex serve (replica %d) exited during the runs: %s", i+1, s.Stderr())
		default:
		}
	}
	return rep, nil
}

// perReplica qualifies a client count when several replicas each get
// that many clients.
func perReplica(servers []*bench.Server) string {
	if len(servers) > 1 {
		return fmt.Sprintf(" on each of %d replicas", len(servers))
	}
	return ""
}

// warm asks s every query once, so its cache holds them before the
// repeated runs.
func warm(ctx context.Context, c *http.Client, s *bench.Server, queries []string) error {
	return parallel(ctx, 2, len(queries), func(i int) error {
		for try := 0; ; try++ {
			code, err := call(ctx, c, http.MethodGet, s.Base+"/api/v1/agents?pageSize=20&q="+url.QueryEscape(queries[i]), "", nil, nil)
			switch {
			case err == nil && code == http.StatusOK:
				return nil
			case err == nil && code == http.StatusServiceUnavailable && try < 20:
				// The server is busy (Retry-After: 1): warming is not
				// measured, so wait and ask again.
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return ctx.Err()
				}
			default:
				return fmt.Errorf("warm %q: status %d, %v", queries[i], code, err)
			}
		}
	})
}

// afterApproval is the first phase of -defaults: submit every agent,
// approve them through the bulk API, run the unique queries at once (next
// is the generator the later runs go on with, so no query repeats), then
// wait for steady state on every replica.
//
// Submissions and approvals all go to the first replica: the replicas
// share one database, so each sees them all the same, and the crawl that
// follows is shared among the replicas by its leases whoever took the
// submission; one entry point keeps the setup times comparable with the
// single-server run, and the approval's retries of agents not crawled yet
// read one replica's answers.
func afterApproval(ctx, setupCtx context.Context, cfg *Config, servers []*bench.Server, a2a *a2aHosts, urls []string, next func() string, rep *report, log io.Writer) error {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	start := time.Now()
	ids, err := submitAll(setupCtx, c, servers[0], urls, &rep.Setup, log)
	if err != nil {
		return err
	}
	if err := waitCrawled(setupCtx, c, servers, start, &rep.Setup, log); err != nil {
		return err
	}
	single := ids[:cfg.ApproveSingle]
	if err := approveSingle(setupCtx, c, servers[0], single, &rep.Setup, log); err != nil {
		return err
	}
	bulk := time.Now()
	if err := approveBulk(setupCtx, c, servers[0], ids[len(single):], &rep.Setup, log); err != nil {
		return err
	}
	rep.Setup.ApprovedBulk, rep.Setup.ApproveBulk = len(ids)-len(single), time.Since(bulk)
	rep.Setup.CrawlApprove = time.Since(start) - rep.Setup.Submit
	for _, clients := range cfg.Clients {
		fmt.Fprintf(log, "unique queries right after the approval, %d clients%s, %s\n", clients, perReplica(servers), cfg.Duration)
		r, err := runLoad(ctx, servers, "unique", clients, cfg.Duration, next)
		if err != nil {
			return err
		}
		r.Phase = phaseAfterApproval
		rep.Runs = append(rep.Runs, r)
	}
	return waitSteady(setupCtx, c, servers, len(ids), a2a.interfaces, &rep.Setup, log)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("%q is not a count from 1 to 1024", f)
		}
		out = append(out, n)
	}
	return out, nil
}
