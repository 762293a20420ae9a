package searchload

import (
	"slices"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/search/corpus"
)

// startFleet serves the corpus cards on loopback: agent i's card is the
// corpus agent i rendered as an A2A card, on host i modulo -hosts. With
// a2aDir set, each card's interfaces first point at fake A2A endpoints on
// its own host that answer the prober (defaults.go); their CAs are written
// in a2aDir.
func startFleet(cfg *Config, a2aDir string) (*agentfleet.Fleet, *a2aHosts, []string, error) {
	f, err := agentfleet.New(agentfleet.Options{Hosts: cfg.Hosts})
	if err != nil {
		return nil, nil, nil, err
	}
	hosts := f.Hosts()
	var a2a *a2aHosts
	if a2aDir != "" {
		if a2a, err = startA2AHosts(hosts, a2aDir); err != nil {
			f.Close()
			return nil, nil, nil, err
		}
	}
	fail := func(err error) (*agentfleet.Fleet, *a2aHosts, []string, error) {
		if a2a != nil {
			a2a.Close()
		}
		f.Close()
		return nil, nil, nil, err
	}
	g := corpus.New(cfg.Seed)
	urls := make([]string, cfg.Agents)
	for i := range cfg.Agents {
		a := g.Agent(i)
		host := hosts[i%len(hosts)]
		if a2a != nil {
			a2a.answer(host, a.Card)
		}
		card, err := json.Marshal(a.Card.A2A())
		if err != nil {
			return fail(fmt.Errorf("card %d: %w", i, err))
		}
		h, err := f.TryAdd(agentfleet.Agent{Behavior: agentfleet.Normal, Card: card, Host: host})
		if err != nil {
			return fail(err)
		}
		urls[i] = h.URL()
	}
	return f, a2a, urls, nil
}

// quietArgs make the server a quiet one: the runs measure search, so
// crawls tick every second and liveness probes are off (a reused
// catalogue's fleet has moved to other ports). -defaults leaves them out.
var quietArgs = []string{"--crawl-tick", "1s", "--probe-interval", "0"}

// startServer runs `cardex serve` on SQLite in data with rate limits off
// (bench.ServeArgs), crawling the loopback fleet, quiet, with an admin
// token. extra flags come last and override these.
func startServer(ctx context.Context, bin, data string, extra ...string) (*bench.Server, error) {
	return bench.Start(ctx, bin, data, append(slices.Clone(quietArgs), extra...)...)
}

// call sends one request and decodes a JSON answer into out when given.
func call(ctx context.Context, c *http.Client, method, url, token string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if out != nil && res.StatusCode/100 == 2 {
		return res.StatusCode, json.NewDecoder(res.Body).Decode(out)
	}
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// populate submits every URL, approves each agent once it has a fetched
// version, and waits until an anonymous search lists them all.
func populate(ctx context.Context, s *bench.Server, urls []string, done bool, log io.Writer) (setupTimes, error) {
	var st setupTimes
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	if done {
		return st, waitIndexed(ctx, c, []*bench.Server{s}, len(urls), &st, log)
	}
	ids, err := submitAll(ctx, c, s, urls, &st, log)
	if err != nil {
		return st, err
	}

	// An agent is approvable once crawled; until then approve answers
	// 409 and the agent goes back to the end of the queue.
	start := time.Now()
	var approved atomic.Int64
	pending := make(chan string, len(ids))
	for _, id := range ids {
		pending <- id
	}
	err = parallel(ctx, 8, len(ids), func(int) error {
		for {
			var id string
			select {
			case id = <-pending:
			case <-ctx.Done():
				return ctx.Err()
			}
			code, err := call(ctx, c, http.MethodPost, s.Base+"/api/v1/agents/"+id+"/approve", s.Token, map[string]int64{"versionSeq": 1}, nil)
			switch {
			case err != nil:
				return err
			case code == http.StatusOK:
				if n := approved.Add(1); n%10000 == 0 {
					fmt.Fprintf(log, "approved %d after %s\n", n, time.Since(start).Round(time.Second))
				}
				return nil
			case code == http.StatusConflict || code == http.StatusUnprocessableEntity || code == http.StatusServiceUnavailable:
				pending <- id
				select {
				case <-time.After(20 * time.Millisecond):
				case <-ctx.Done():
					return ctx.Err()
				}
			default:
				return fmt.Errorf("approve %s: status %d", id, code)
			}
		}
	})
	if err != nil {
		return st, err
	}
	st.CrawlApprove = time.Since(start)
	fmt.Fprintf(log, "crawled and approved %d agents in %s\n", len(ids), st.CrawlApprove.Round(time.Second))

	return st, waitIndexed(ctx, c, []*bench.Server{s}, len(ids), &st, log)
}

// submitAll submits every URL with 16 clients and returns the agents' ids
// in the order of urls.
// submitClients submit at once, and as many approve one by one.
const submitClients = 32

func submitAll(ctx context.Context, c *http.Client, s *bench.Server, urls []string, st *setupTimes, log io.Writer) ([]string, error) {
	start := time.Now()
	ids := make([]string, len(urls))
	if err := parallel(ctx, submitClients, len(urls), func(i int) error {
		var a struct {
			ID string `json:"id"`
		}
		code, err := call(ctx, c, http.MethodPost, s.Base+"/api/v1/agents", s.Token, map[string]string{"cardUrl": urls[i]}, &a)
		if err != nil || code != http.StatusAccepted {
			return fmt.Errorf("submit %s: status %d, %v", urls[i], code, err)
		}
		ids[i] = a.ID
		return nil
	}); err != nil {
		return nil, err
	}
	st.Submit = time.Since(start)
	fmt.Fprintf(log, "submitted %d agents in %s\n", len(ids), st.Submit.Round(time.Second))
	return ids, nil
}

// waitIndexed waits until an anonymous list counts n agents on every
// server (each replica has its own index).
func waitIndexed(ctx context.Context, c *http.Client, servers []*bench.Server, n int, st *setupTimes, log io.Writer) error {
	start := time.Now()
	for i, s := range servers {
		for {
			var page struct {
				TotalSize int `json:"totalSize"`
			}
			code, err := call(ctx, c, http.MethodGet, s.Base+"/api/v1/agents?pageSize=1", "", nil, &page)
			if err == nil && code == http.StatusOK && page.TotalSize >= n {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for the index%s (%d listed): %w", replicaName(servers, i), page.TotalSize, ctx.Err())
			case <-time.After(500 * time.Millisecond):
			}
		}
		if len(servers) > 1 {
			fmt.Fprintf(log, "replica %d: index lists them all %s later\n", i+1, time.Since(start).Round(time.Second))
		}
	}
	st.Index = time.Since(start)
	fmt.Fprintf(log, "index lists them all %s later\n", st.Index.Round(time.Second))
	return nil
}

// replicaName is " of replica N" when there are several servers.
func replicaName(servers []*bench.Server, i int) string {
	if len(servers) > 1 {
		return fmt.Sprintf(" of replica %d", i+1)
	}
	return ""
}

// parallel runs f(0..n-1) on workers goroutines; the first error stops it.
func parallel(ctx context.Context, workers, n int, f func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
