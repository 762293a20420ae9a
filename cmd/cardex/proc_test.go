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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
)

// The operations tests (replicas, crash under mixed load, index loss) run
// real `cardex serve` subprocesses. The binary is built once per test
// binary: each test then pays only for starting processes.
var procBinary struct {
	once sync.Once
	path string
	err  error
}

// procBin returns the cardex binary, building it on first use (with -race
// when the tests run with it, so the build reuses their compiled packages).
// The directory is left for the OS to clean: no TestMain owns its lifetime.
func procBin(t *testing.T) string {
	t.Helper()
	procBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "cardex-proc-test-")
		if err != nil {
			procBinary.err = err
			return
		}
		bin := filepath.Join(dir, "cardex")
		args := []string{"build", "-o", bin}
		if raceEnabled {
			args = append(args, "-race")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "go", append(args, ".")...).CombinedOutput(); err != nil {
			procBinary.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		procBinary.path = bin
	})
	if procBinary.err != nil {
		t.Fatal(procBinary.err)
	}
	return procBinary.path
}

// storeArgs names a store: SQLite in data, or PostgreSQL at dbURL (with
// data then holding only the replica's own search index).
func storeArgs(data, dbURL string) []string {
	if dbURL != "" {
		return []string{"--data", data, "--database-url", dbURL}
	}
	return []string{"--data", data}
}

// procToken runs `cardex token create --role admin` against the store and
// returns the printed token (the first line of stdout). It may run while a
// server holds the store.
func procToken(t *testing.T, bin, data, dbURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args := append([]string{"token", "create", "--role", "admin", "--name", fmt.Sprintf("ops-test-%d", time.Now().UnixNano())}, storeArgs(data, dbURL)...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cardex token create: %v\n%s", err, stderr.String())
	}
	tok, _, _ := strings.Cut(string(out), "\n")
	if tok == "" {
		t.Fatalf("cardex token create printed no token")
	}
	return tok
}

// kill sends SIGKILL and waits (bounded) for the process to end by it.
func (s *server) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("server ended with %v, want SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("killed server did not exit")
	}
}

// stop sends SIGTERM and waits (bounded) for a clean exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("SIGTERM: %v\n%s", err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop on SIGTERM")
	}
}

// waitReady polls /readyz until it answers 200: the database is reachable
// and the search index is built and caught up (api.Config.SearchReady).
func (s *server) waitReady(t *testing.T, d time.Duration) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	polltest.Until(t, "/readyz 200 from "+s.base, d, func() bool {
		res, err := c.Get(s.base + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// opsClient calls a server's API with an admin token.
type opsClient struct {
	base  string
	token string
	http  *http.Client
}

func newOpsClient(base, token string) *opsClient {
	return &opsClient{base: base, token: token, http: &http.Client{Timeout: 10 * time.Second}}
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (when non-nil and the status is 2xx). err is a transport or
// decoding error: a status is never an error here.
func (c *opsClient) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if out != nil && res.StatusCode/100 == 2 {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			return res.StatusCode, err
		}
		return res.StatusCode, nil
	}
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// opsAgent is the part of the API's Agent record these tests read.
type opsAgent struct {
	ID         string `json:"id"`
	CardURL    string `json:"cardUrl"`
	Status     string `json:"status"`
	VersionSeq int64  `json:"versionSeq"`
	// NextFetchAt and LastFetchedAt are null before the first schedule
	// and fetch.
	NextFetchAt   *time.Time `json:"nextFetchAt"`
	LastFetchedAt *time.Time `json:"lastFetchedAt"`
	LastError     *struct {
		Class   string `json:"class"`
		Message string `json:"message"`
	} `json:"lastError"`
}

type opsPage struct {
	Agents        []opsAgent `json:"agents"`
	NextPageToken string     `json:"nextPageToken"`
	TotalSize     int        `json:"totalSize"`
}

// listAll pages through GET /api/v1/agents?query (bounded: at most 100
// pages of 100) and returns the ids in the order served.
func (c *opsClient) listAll(ctx context.Context, query string) ([]opsAgent, error) {
	var all []opsAgent
	token := ""
	for range 100 {
		q := "pageSize=100"
		if query != "" {
			q += "&" + query
		}
		if token != "" {
			q += "&pageToken=" + token
		}
		var p opsPage
		st, err := c.do(ctx, http.MethodGet, "/api/v1/agents?"+q, nil, &p)
		if err != nil {
			return nil, err
		}
		if st != http.StatusOK {
			return nil, fmt.Errorf("GET /api/v1/agents?%s: status %d", q, st)
		}
		all = append(all, p.Agents...)
		if p.NextPageToken == "" {
			return all, nil
		}
		token = p.NextPageToken
	}
	return nil, errors.New("more than 100 pages")
}

// ids is the id list of agents.
func ids(agents []opsAgent) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = a.ID
	}
	return out
}
