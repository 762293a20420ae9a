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
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// measure prepares the catalogue and runs every workload.
func measure(ctx context.Context, cfg *Config, log io.Writer) (*report, error) {
	rep := &report{Agents: cfg.Agents, Started: time.Now().UTC(), Machine: machine()}
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
	var s *bench.Server
	if cfg.Defaults {
		rep.Defaults = true
		s, err = bench.Start(ctx, bin, data, "--ca-file", a2a.caFile)
	} else {
		s, err = startServer(ctx, bin, data)
	}
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	setupCtx, cancel := context.WithTimeout(ctx, cfg.Setup)
	defer cancel()
	gen := newQueryGen(cfg.Seed, cfg.Agents)
	unique := func() string {
		q, _ := gen.next()
		return q
	}
	phase := ""
	if cfg.Defaults {
		if err := afterApproval(ctx, setupCtx, cfg, s, a2a, urls, unique, rep, log); err != nil {
			return rep, err
		}
		phase = phaseSteady
	} else if rep.Setup, err = populate(setupCtx, s, urls, cfg.Populated, log); err != nil {
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
		fmt.Fprintf(log, "unique queries, %d clients, %s\n", clients, cfg.Duration)
		r, err := runLoad(ctx, s, "unique", clients, cfg.Duration, unique)
		r.Phase = phase
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	// One pass over the list fills the server's cache, then the runs.
	fmt.Fprintf(log, "warming %d repeated queries\n", len(repeated))
	c := &http.Client{Timeout: time.Minute}
	if err := parallel(ctx, 2, len(repeated), func(i int) error {
		for try := 0; ; try++ {
			code, err := call(ctx, c, http.MethodGet, s.Base+"/api/v1/agents?pageSize=20&q="+url.QueryEscape(repeated[i]), "", nil, nil)
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
				return fmt.Errorf("warm %q: status %d, %v", repeated[i], code, err)
			}
		}
	}); err != nil {
		return rep, err
	}
	for _, clients := range cfg.Clients {
		fmt.Fprintf(log, "repeated queries, %d clients, %s\n", clients, cfg.Duration)
		r, err := runLoad(ctx, s, "repeated", clients, cfg.Duration, again)
		r.Phase = phase
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, r)
	}
	if _, rep.RSSBytes, err = bench.ProcStat(s.Cmd.Process.Pid); err != nil {
		return rep, err
	}
	if rep.Probes, err = probes(ctx, c, s); err != nil {
		return rep, err
	}
	if cfg.Reindex {
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
	select {
	case <-s.Exited:
		return rep, errors.New("cardex serve exited during the runs: " + s.Stderr())
	default:
	}
	return rep, nil
}

// afterApproval is the first phase of -defaults: submit every agent,
// approve them through the bulk API, run the unique queries at once (next
// is the generator the later runs go on with, so no query repeats), then
// wait for steady state.
func afterApproval(ctx, setupCtx context.Context, cfg *Config, s *bench.Server, a2a *a2aHosts, urls []string, next func() string, rep *report, log io.Writer) error {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	ids, err := submitAll(setupCtx, c, s, urls, &rep.Setup, log)
	if err != nil {
		return err
	}
	if err := approveBulk(setupCtx, c, s, ids, &rep.Setup, log); err != nil {
		return err
	}
	for _, clients := range cfg.Clients {
		fmt.Fprintf(log, "unique queries right after the approval, %d clients, %s\n", clients, cfg.Duration)
		r, err := runLoad(ctx, s, "unique", clients, cfg.Duration, next)
		if err != nil {
			return err
		}
		r.Phase = phaseAfterApproval
		rep.Runs = append(rep.Runs, r)
	}
	return waitSteady(setupCtx, c, s, len(ids), a2a.interfaces, &rep.Setup, log)
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
