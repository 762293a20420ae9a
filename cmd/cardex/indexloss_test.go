package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/internal/polltest"
)

// searchSnapshot is the ids every opsQueries query answers, for an admin
// and for anonymous readers.
func searchSnapshot(t *testing.T, admin, anon *opsClient) (map[string][]string, error) {
	t.Helper()
	out := map[string][]string{}
	for _, c := range []*opsClient{admin, anon} {
		who := "admin"
		if c.token == "" {
			who = "anonymous"
		}
		for _, q := range opsQueries {
			got, err := c.listAll(t.Context(), q)
			if err != nil {
				return nil, err
			}
			out[who+" "+q] = ids(got)
		}
	}
	return out, nil
}

// sameSnapshot reports the first query whose answers differ.
func sameSnapshot(want, got map[string][]string) (string, bool) {
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Equal(want[k], got[k]) {
			return fmt.Sprintf("%s: %d ids, want %d", k, len(got[k]), len(want[k])), false
		}
	}
	return "", true
}

// indexLag reads cardex_index_lag_changes (change-log entries the index
// has not applied yet) from /metrics.
func indexLag(t *testing.T, base string) (float64, error) {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "cardex_index_lag_changes "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no cardex_index_lag_changes on /metrics")
}

// liveGeneration is the index generation CURRENT names (search/index.go
// layout: index/CURRENT, index/gen-NNNN).
func liveGeneration(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "index", "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(data, "index", strings.TrimSpace(string(b)))
}

// docs/threats.md G.69 at deployment level: the index of a running server
// is deleted, or its CURRENT file or a segment is corrupted. The server
// detects this when it opens the index, so each case ends with a restart
// (a graceful one after the deletion, kill -9 after corruption); the
// restarted server rebuilds from SQL and every search answers as before.
func TestIndexLossRebuildsOnRestart(t *testing.T) {
	t.Parallel() // subprocesses mostly wait on timers and I/O: overlap them with the other operations tests
	bin := procBin(t)
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2})
	var urls []string
	for range 40 {
		urls = append(urls, fleet.Add(agentfleet.Agent{Behavior: agentfleet.Conditional}).URL())
	}
	data := t.TempDir()
	// Cards do not change here and re-crawls wait an hour, so once the
	// catalogue is indexed nothing moves the reference answers.
	args := append(opsCrawlArgs(), "--crawl-interval", "1h", "--crawl-min-interval", "1h")
	srv := startServer(t, bin, data, args...)
	srv.waitReady(t, time.Minute)
	token := procToken(t, bin, data, "")
	admin := newOpsClient(srv.base, token)
	byURL := submitAll(t, admin, urls)
	var all []string
	for _, id := range byURL {
		all = append(all, id)
	}
	waitAllFetched(t, admin, all, 45*time.Second)
	// Approve half: anonymous readers then see a strict subset.
	approveAll(t, admin, all[:20])
	waitSameSearch(t, []*opsClient{admin}, all, 30*time.Second)
	// The reference answers: the indexer has applied every change (lag 0
	// on /metrics) and two polls in a row agree.
	var before, prev map[string][]string
	polltest.Until(t, func() string {
		return fmt.Sprintf("a settled search snapshot with the approvals indexed: %d anonymous results", len(prev["anonymous sort=name"]))
	}, 30*time.Second, func() bool {
		if lag, err := indexLag(t, srv.base); err != nil || lag != 0 {
			return false
		}
		s, err := searchSnapshot(t, admin, newOpsClient(srv.base, ""))
		if err != nil || len(s["anonymous sort=name"]) != 20 {
			return false
		}
		_, same := sameSnapshot(s, prev)
		prev = s
		if same {
			before = s
		}
		return same
	})

	// A segment is truncated at rest (the server killed first): Bleve maps
	// segments into memory, and truncating one under a running process
	// faults it (SIGBUS) on the next read of the lost pages, which no
	// server can survive; disk corruption is found on the next start.
	cases := []struct {
		name   string
		lose   func(t *testing.T)
		crash  bool // kill -9 rather than SIGTERM before the restart
		atRest bool // lose the index after the kill
	}{
		{"deleted", func(t *testing.T) {
			if err := os.RemoveAll(filepath.Join(data, "index")); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"corrupt CURRENT", func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(data, "index", "CURRENT"), []byte("../../etc\x00garbage"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true, false},
		{"truncated segment", func(t *testing.T) {
			var segs []string
			filepath.WalkDir(liveGeneration(t, data), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".zap") {
					segs = append(segs, p)
				}
				return nil
			})
			if len(segs) == 0 {
				t.Fatal("the live generation has no .zap segment")
			}
			for _, p := range segs {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(p, fi.Size()/2); err != nil {
					t.Fatal(err)
				}
			}
		}, true, true},
	}
	// The cases run in order on one data directory, each against the
	// server the previous one restarted (not as subtests: a server belongs
	// to the test that started it).
	for _, tc := range cases {
		t.Logf("case %s", tc.name)
		if tc.atRest {
			srv.kill(t)
			tc.lose(t)
		} else {
			tc.lose(t)
			// The running server keeps answering (from the files it
			// has open), never with a 5xx.
			st, err := admin.do(t.Context(), http.MethodGet, "/api/v1/agents?q=travel", nil, nil)
			if err != nil || st >= 500 {
				t.Fatalf("%s: search on the running server after the loss: status %d, %v", tc.name, st, err)
			}
			if tc.crash {
				srv.kill(t)
			} else {
				srv.stop(t)
			}
		}
		srv = startServer(t, bin, data, args...)
		admin = newOpsClient(srv.base, token)
		srv.waitReady(t, time.Minute)
		var diff string
		polltest.Until(t, func() string { return tc.name + ": the rebuilt index to answer as before: " + diff }, 30*time.Second, func() bool {
			after, err := searchSnapshot(t, admin, newOpsClient(srv.base, ""))
			if err != nil {
				diff = err.Error()
				return false
			}
			var same bool
			diff, same = sameSnapshot(before, after)
			return same
		})
		if !strings.Contains(srv.stderr.String(), "search index needs a rebuild") {
			t.Fatalf("%s: the restarted server did not report a rebuild:\n%s", tc.name, srv.stderr.String())
		}
	}
}
