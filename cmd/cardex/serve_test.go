package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/internal/polltest"
)

// lockedBuffer is a stderr shared with a running server.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// readAddrFile waits for the server to write its bound address.
func readAddrFile(t *testing.T, path string, exited <-chan int) string {
	t.Helper()
	var addr string
	polltest.Until(t, "the address file", 60*time.Second, func() bool {
		select {
		case code := <-exited:
			t.Fatalf("server exited with %d before listening", code)
		default:
		}
		b, err := os.ReadFile(path)
		addr = strings.TrimSpace(string(b))
		return err == nil && addr != ""
	})
	return addr
}

// startServe runs `cardex serve` in-process until the returned cancel.
func startServe(t *testing.T, args ...string) (base string, logs *lockedBuffer, cancel context.CancelFunc, exited chan int) {
	t.Helper()
	s := startInProcess(t, filepath.Join(t.TempDir(), "data"), args...)
	return s.base, s.logs, s.cancel, s.exited
}

// testServer is an in-process `cardex serve`.
type testServer struct {
	base   string
	data   string
	logs   *lockedBuffer // stderr
	stdout *lockedBuffer
	cancel context.CancelFunc
	exited chan int // the exit code, once; the cleanup waits for it
}

// startInProcess runs `cardex serve --data data args…` on a free loopback
// port; the test's cleanup stops it (bounded).
func startInProcess(t *testing.T, data string, args ...string) *testServer {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(t.Context())
	s := &testServer{data: data, logs: &lockedBuffer{}, stdout: &lockedBuffer{}, cancel: cancel, exited: make(chan int, 1)}
	e := &env{stdin: strings.NewReader(""), stdout: s.stdout, stderr: s.logs, getenv: func(string) string { return "" }}
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--data", data}, args...)
	go func() { s.exited <- run(ctx, e, all) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	s.base = "http://" + readAddrFile(t, addrFile, s.exited)
	return s
}

// stop cancels the server (as SIGTERM does) and returns its exit code.
func (s *testServer) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.exited:
		s.exited <- code // for the cleanup
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop")
		return -1
	}
}

func TestServeAnswersAndShutsDownGracefully(t *testing.T) {
	base, logs, cancel, exited := startServe(t, "--log-format", "json")
	// Ready once the database answers and the search index is built.
	polltest.Until(t, "/readyz", 20*time.Second, func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	// A submission whose body is still arriving when shutdown starts. With
	// Expect: 100-continue the server says when the handler starts reading
	// the body, so the request is provably in flight before the cancel.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := `{"cardUrl":"https://graceful.example.com/"}`
	fmt.Fprintf(conn, "POST /api/v1/agents HTTP/1.1\r\nHost: cardex\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("no 100 Continue: %q %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line after it
		t.Fatal(err)
	}
	cancel()
	polltest.Until(t, "shutdown to start", 10*time.Second, func() bool { return strings.Contains(logs.String(), `"msg":"shutting down"`) })
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	res2, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request: %v", err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusAccepted {
		t.Fatalf("in-flight request: status %d", res2.StatusCode)
	}
	select {
	case code := <-exited:
		if code != exitOK {
			t.Fatalf("exit %d; logs:\n%s", code, logs.String())
		}
		exited <- code // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	// Structured logs: the listening line, one access line per request with
	// the route template, and the stop.
	var sawListen, sawAccess, sawStop bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		switch m["msg"] {
		case "listening":
			sawListen = strings.HasPrefix(m["addr"].(string), "127.0.0.1:")
		case "http request":
			if m["route"] == "/api/v1/agents" && m["status"] == float64(202) {
				sawAccess = true
			}
		case "stopped":
			sawStop = true
		}
	}
	if !sawListen || !sawAccess || !sawStop {
		t.Fatalf("listen %v access %v stop %v; logs:\n%s", sawListen, sawAccess, sawStop, logs.String())
	}
}

// docs/threats.md F.67: a second server on the same data directory fails
// fast instead of becoming a second writer.
func TestServeRefusesLockedDataDir(t *testing.T) {
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	ctx, cancel := context.WithCancel(t.Context())
	exited := make(chan int, 1)
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &lockedBuffer{}, getenv: func(string) string { return "" }}
	go func() {
		exited <- run(ctx, e, []string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--data", dir})
	}()
	defer func() { cancel(); <-exited }()
	readAddrFile(t, addrFile, exited)
	code, _, stderr := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--data", dir)
	if code != exitFail || !strings.Contains(stderr, "locked") {
		t.Fatalf("second server: code %d stderr %q", code, stderr)
	}
}
