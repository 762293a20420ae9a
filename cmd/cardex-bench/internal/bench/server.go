package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles cmd/cardex into dir (with -race when race is set) and
// returns the binary's path.
func Build(ctx context.Context, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "cardex")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	out, err := exec.CommandContext(ctx, "go", append(args, "github.com/cardexhq/cardex/cmd/cardex")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// Server is a running `cardex serve` subprocess.
type Server struct {
	Cmd    *exec.Cmd
	Base   string // http://127.0.0.1:port
	Token  string // an admin token
	Exited chan struct{}
	stderr lockedBuffer
}

// Stderr is what the server wrote to stderr so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// ServeArgs are the flags every bench server runs with: loopback only,
// the fleet's 127.0.0.0/8 addresses allowed over plain HTTP, rate limits
// off, errors logged only.
var ServeArgs = []string{"--addr", "127.0.0.1:0", "--allow-networks", "127.0.0.0/8", "--allow-insecure-http",
	"--submit-rate", "0", "--read-rate", "0", "--log-level", "error"}

// Start runs `cardex serve` with ServeArgs on data, then extra (which come
// last and override them), waits until it listens and creates an admin
// token.
func Start(ctx context.Context, bin, data string, extra ...string) (*Server, error) {
	return StartOn(ctx, bin, data, "", extra...)
}

// StartOn is Start on the PostgreSQL database at databaseURL when it is
// set (data then holds only the server's own search index), on SQLite in
// data otherwise.
func StartOn(ctx context.Context, bin, data, databaseURL string, extra ...string) (*Server, error) {
	addrFile := filepath.Join(data, "addr")
	// A reused data directory holds the address of an earlier run's server.
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s := &Server{Exited: make(chan struct{})}
	store := []string{"--data", data}
	if databaseURL != "" {
		store = append(store, "--database-url", databaseURL)
	}
	args := append(append([]string{"serve", "--addr-file", addrFile}, store...), ServeArgs...)
	s.Cmd = exec.Command(bin, append(args, extra...)...)
	s.Cmd.Stderr = &s.stderr
	if err := s.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.Cmd.Wait(); close(s.Exited) }()
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(addrFile)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			s.Base = "http://" + strings.TrimSpace(string(b))
			break
		}
		select {
		case <-s.Exited:
			return nil, fmt.Errorf("cardex serve exited: %s", s.Stderr())
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, errors.New("cardex serve did not write its address within a minute")
		}
	}
	out, err := exec.CommandContext(ctx, bin, append([]string{"token", "create", "--role", "admin", "--name", "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)}, store...)...).Output()
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("token create: %w", err)
	}
	s.Token, _, _ = strings.Cut(string(out), "\n")
	return s, nil
}

// Stop ends the server (SIGTERM, then SIGKILL after 30 s).
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.Exited:
	case <-time.After(30 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-s.Exited
	}
}

// lockedBuffer is a bytes.Buffer the server's stderr copier writes while
// a reader reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ErrNoMetric: /metrics lacks a series a report needs.
var ErrNoMetric = errors.New("metric missing from /metrics")

// ReadMetrics reads url (a server's /metrics, Prometheus text format) once
// and returns the value of each named metric, the sum of its series when
// it has labels. A name /metrics lacks is an ErrNoMetric.
func ReadMetrics(ctx context.Context, c *http.Client, url string, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read /metrics: status %d", res.StatusCode)
	}
	found := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		series, val, ok := strings.Cut(sc.Text(), " ")
		name, _, _ := strings.Cut(series, "{")
		if !ok || strings.HasPrefix(series, "#") || !slices.Contains(names, name) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("read /metrics: %s %q: %w", series, val, err)
		}
		found[name] += v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	for _, n := range names {
		if _, ok := found[n]; !ok {
			return nil, fmt.Errorf("%w: need %s", ErrNoMetric, strings.Join(names, " and "))
		}
	}
	return found, nil
}

// ProcStat reads a process's CPU time (user+system) and resident set.
func ProcStat(pid int) (cpu time.Duration, rss int64, err error) {
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

// LoadAvg is the 1-minute load average, -1 when unknown.
func LoadAvg() float64 {
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
