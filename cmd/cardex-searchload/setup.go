package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/search/corpus"
)

// server is a running `cardex serve`.
type server struct {
	cmd    *exec.Cmd
	base   string
	token  string
	exited chan struct{}
	stderr bytes.Buffer
}

// startFleet serves the corpus cards on loopback: agent i's card is the
// corpus agent i rendered as an A2A v1 card.
func startFleet(cfg *config) (*agentfleet.Fleet, []string, error) {
	f, err := agentfleet.New(agentfleet.Options{Hosts: cfg.Hosts})
	if err != nil {
		return nil, nil, err
	}
	g := corpus.New(cfg.Seed)
	urls := make([]string, cfg.Agents)
	for i := range cfg.Agents {
		a := g.Agent(i)
		card, err := json.Marshal(a.Card.A2A())
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("card %d: %w", i, err)
		}
		h, err := f.TryAdd(agentfleet.Agent{Behavior: agentfleet.Normal, Card: card})
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		urls[i] = h.URL()
	}
	return f, urls, nil
}

// buildCardex compiles cmd/cardex into dir.
func buildCardex(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cardex")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/cardexhq/cardex/cmd/cardex").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// startServer runs `cardex serve` on SQLite in data with rate limits off,
// crawling the loopback fleet, and creates an admin token. Liveness probes
// are off: the runs measure search, and a reused catalogue's fleet has
// moved to other ports. extra flags come last and override these.
func startServer(ctx context.Context, bin, data string, extra ...string) (*server, error) {
	addrFile := filepath.Join(data, "addr")
	// A reused -data holds the address of an earlier run's server.
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s := &server{exited: make(chan struct{})}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--data", data,
		"--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--submit-rate", "0", "--read-rate", "0",
		"--crawl-tick", "1s", "--probe-interval", "0", "--log-level", "error"}, extra...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(addrFile)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			s.base = "http://" + strings.TrimSpace(string(b))
			break
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("cardex serve exited: %s", s.stderr.String())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("cardex serve did not write its address within a minute")
		}
	}
	out, err := exec.CommandContext(ctx, bin, "token", "create", "--role", "admin", "--name", "searchload-"+strconv.FormatInt(time.Now().UnixNano(), 36), "--data", data).Output()
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("token create: %w", err)
	}
	s.token, _, _ = strings.Cut(string(out), "\n")
	return s, nil
}

// stop ends the server (SIGTERM, then SIGKILL after 30 s).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
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
func populate(ctx context.Context, s *server, urls []string, done bool, log io.Writer) (setupTimes, error) {
	var st setupTimes
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	if done {
		return st, waitIndexed(ctx, c, s, len(urls), &st, log)
	}
	start := time.Now()
	ids := make([]string, len(urls))
	if err := parallel(ctx, 16, len(urls), func(i int) error {
		var a struct {
			ID string `json:"id"`
		}
		code, err := call(ctx, c, http.MethodPost, s.base+"/api/v1/agents", s.token, map[string]string{"cardUrl": urls[i]}, &a)
		if err != nil || code != http.StatusAccepted {
			return fmt.Errorf("submit %s: status %d, %v", urls[i], code, err)
		}
		ids[i] = a.ID
		return nil
	}); err != nil {
		return st, err
	}
	st.Submit = time.Since(start)
	fmt.Fprintf(log, "submitted %d agents in %s\n", len(ids), st.Submit.Round(time.Second))

	// An agent is approvable once crawled; until then approve answers
	// 409 and the agent goes back to the end of the queue.
	start = time.Now()
	var approved atomic.Int64
	pending := make(chan string, len(ids))
	for _, id := range ids {
		pending <- id
	}
	err := parallel(ctx, 8, len(ids), func(int) error {
		for {
			var id string
			select {
			case id = <-pending:
			case <-ctx.Done():
				return ctx.Err()
			}
			code, err := call(ctx, c, http.MethodPost, s.base+"/api/v1/agents/"+id+"/approve", s.token, map[string]int64{"versionSeq": 1}, nil)
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

	return st, waitIndexed(ctx, c, s, len(ids), &st, log)
}

// waitIndexed waits until an anonymous list counts n agents.
func waitIndexed(ctx context.Context, c *http.Client, s *server, n int, st *setupTimes, log io.Writer) error {
	start := time.Now()
	for {
		var page struct {
			TotalSize int `json:"totalSize"`
		}
		code, err := call(ctx, c, http.MethodGet, s.base+"/api/v1/agents?pageSize=1", "", nil, &page)
		if err == nil && code == http.StatusOK && page.TotalSize >= n {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the index (%d listed): %w", page.TotalSize, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	st.Index = time.Since(start)
	fmt.Fprintf(log, "index lists them all %s later\n", st.Index.Round(time.Second))
	return nil
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

// procStat reads a process's CPU time (user+system) and resident set.
func procStat(pid int) (cpu time.Duration, rss int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 22 {
		return 0, 0, errors.New("short /proc stat")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond, pages * int64(os.Getpagesize()), nil
}

// loadAvg is the 1-minute load average.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
