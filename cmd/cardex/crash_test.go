package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // database/sql driver "sqlite3", to inspect the file directly

	"github.com/cardexhq/cardex/internal/polltest"
)

// server is a `cardex serve` subprocess.
type server struct {
	cmd    *exec.Cmd
	base   string
	stderr *lockedBuffer
	exited chan error
}

func startServer(t *testing.T, bin, data string, extra ...string) *server {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	s := &server{stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--data", data,
		"--submit-rate", "0", "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", "--log-level", "warn"}
	s.cmd = exec.Command(bin, append(args, extra...)...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			<-s.exited
		}
	})
	polltest.Until(t, "the server to listen", 60*time.Second, func() bool {
		select {
		case err := <-s.exited:
			t.Fatalf("server exited before listening: %v\n%s", err, s.stderr.String())
		default:
		}
		b, err := os.ReadFile(addrFile)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return false
		}
		s.base = "http://" + string(bytes.TrimSpace(b))
		return true
	})
	return s
}

// docs/threats.md F.61: kill -9 during a registration burst loses no
// acknowledged registration and leaves no half-written rows, and the
// database passes PRAGMA integrity_check.
func TestCrashDuringSubmissionBurst(t *testing.T) {
	bin := procBin(t)
	data := t.TempDir()
	srv := startServer(t, bin, data)

	const total, workers, killAfter = 400, 16, 120
	client := &http.Client{Timeout: 10 * time.Second}
	jobs := make(chan int)
	var (
		mu     sync.Mutex
		acked  = map[string]string{} // id → submitted URL
		failed atomic.Int64
		killed = make(chan struct{})
		once   sync.Once
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for n := range jobs {
				cardURL := fmt.Sprintf("https://agent-%d.example.com/", n)
				res, err := client.Post(srv.base+"/api/v1/agents", "application/json",
					strings.NewReader(fmt.Sprintf(`{"cardUrl":%q}`, cardURL)))
				if err != nil {
					failed.Add(1)
					continue
				}
				var rec struct {
					ID      string `json:"id"`
					CardURL string `json:"cardUrl"`
				}
				decErr := json.NewDecoder(res.Body).Decode(&rec)
				res.Body.Close()
				if res.StatusCode != http.StatusAccepted || decErr != nil {
					// A 202 whose body was cut by the kill is not an acknowledgement.
					failed.Add(1)
					continue
				}
				mu.Lock()
				acked[rec.ID] = cardURL
				n := len(acked)
				mu.Unlock()
				if n >= killAfter {
					once.Do(func() {
						srv.cmd.Process.Signal(syscall.SIGKILL)
						close(killed)
					})
				}
			}
		})
	}
	for n := range total {
		jobs <- n
	}
	close(jobs)
	wg.Wait()
	select {
	case <-killed:
	default:
		t.Fatalf("the burst ended before the kill: %d acknowledged, %d failed\n%s", len(acked), failed.Load(), srv.stderr.String())
	}
	select {
	case err := <-srv.exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("server ended with %v, want SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("killed server did not exit")
	}
	if failed.Load() == 0 {
		t.Fatalf("no request failed: the kill did not land mid-burst")
	}
	t.Logf("%d acknowledged before the kill, %d failed", len(acked), failed.Load())

	// Restart on the same data: every acknowledged agent is there.
	// (Reads are not rate-limited here: the check reads every agent at once.)
	srv2 := startServer(t, bin, data, "--read-rate", "0")
	for id, cardURL := range acked {
		res, err := client.Get(srv2.base + "/api/v1/agents/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			CardURL string `json:"cardUrl"`
		}
		err = json.NewDecoder(res.Body).Decode(&rec)
		res.Body.Close()
		want := cardURL + ".well-known/agent-card.json"
		if res.StatusCode != http.StatusOK || err != nil || rec.CardURL != want {
			t.Fatalf("acknowledged agent %s: status %d, cardUrl %q (want %q), err %v", id, res.StatusCode, rec.CardURL, want, err)
		}
	}
	// A graceful stop this time.
	if err := srv2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-srv2.exited:
		if err != nil {
			t.Fatalf("SIGTERM: %v\n%s", err, srv2.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop on SIGTERM")
	}

	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "cardex.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	var agents, orphans, submitted, audited int
	q := func(query string, dst *int) {
		if err := db.QueryRowContext(t.Context(), query).Scan(dst); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	q("SELECT COUNT(*) FROM agents", &agents)
	q("SELECT COUNT(*) FROM agents a WHERE NOT EXISTS (SELECT 1 FROM changes c WHERE c.agent_id = a.id AND c.kind = 'submitted')", &orphans)
	q("SELECT COUNT(*) FROM changes WHERE kind = 'submitted'", &submitted)
	q("SELECT COUNT(*) FROM audit_log WHERE action = 'submit'", &audited)
	if agents < len(acked) || orphans != 0 || submitted != agents || audited != agents {
		t.Fatalf("%d agents (%d acknowledged), %d without a submitted change, %d submitted changes, %d submit audit entries",
			agents, len(acked), orphans, submitted, audited)
	}
}
