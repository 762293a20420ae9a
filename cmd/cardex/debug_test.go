package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// --debug-addr is refused anywhere but loopback: the profiles have no
// authentication of their own.
func TestDebugAddrLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "192.0.2.1:6060", "localhost:6060", "[::]:6060", "6060"} {
		_, err := parseServeConfig([]string{"--data", t.TempDir(), "--debug-addr", addr}, func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "debug-addr") {
			t.Errorf("--debug-addr %s: err %v, want a debug-addr error", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:6060", "127.0.0.2:6060"} {
		if _, err := parseServeConfig([]string{"--data", t.TempDir(), "--debug-addr", addr}, func(string) string { return "" }, io.Discard, io.Discard); err != nil {
			t.Errorf("--debug-addr %s: %v", addr, err)
		}
	}
}

// The debug listener serves the profile index and a heap profile, and
// nothing without --debug-addr.
func TestDebugListenerServesProfiles(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	addr, stop, err := startDebug("", log)
	if err != nil || addr != nil {
		t.Fatalf("no --debug-addr: %v, %v", addr, err)
	}
	stop()
	addr, stop, err = startDebug("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for path, want := range map[string]string{"/debug/pprof/": "goroutine", "/debug/pprof/heap?debug=1": "heap profile"} {
		res, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, %.80q", path, res.StatusCode, b)
		}
	}
	res, err := http.Get("http://" + addr.String() + "/api/v1/agents")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the debug listener answered /api/v1/agents with %d", res.StatusCode)
	}
}
