package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
	"github.com/cardexhq/cardex/internal/polltest"
)

// buildServer compiles cmd/cardex (with -race when this test has it).
func buildServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := bench.Build(ctx, t.TempDir(), bench.RaceEnabled)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startServe runs `cardex serve` on a loopback port with data in a temp
// directory, crawling often, and returns its base URL and an admin token.
func startServe(t *testing.T, bin string) (base, token string) {
	t.Helper()
	s, err := bench.Start(t.Context(), bin, t.TempDir(), "--crawl-tick", "1s", "--crawl-min-interval", "1s", "--crawl-timeout", "2s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s.Base, s.Token
}

// TestLoadAgainstServe runs the generator for a few seconds against a real
// server crawling a small loopback fleet: every operation runs, no answer
// is a 5xx, no request fails in transport, and the server's goroutines
// come back within the slack.
func TestLoadAgainstServe(t *testing.T) {
	bin := buildServer(t)
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 4})
	base, token := startServe(t, bin)

	c := &client{cfg: &Config{URL: base, Token: token}, http: &http.Client{Timeout: 10 * time.Second}}
	for i := range 20 {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Changing, ChangeEvery: 3})
		st, err := c.call(t.Context(), http.MethodPost, "/api/v1/agents", map[string]string{"cardUrl": a.URL()}, nil)
		if err != nil || st != http.StatusAccepted {
			t.Fatalf("submit %d: status %d, %v", i, st, err)
		}
	}
	// Reads by id and approvals need crawled agents.
	polltest.Until(t, "the fleet to be crawled", time.Minute, func() bool {
		var page struct {
			Agents []agentRef `json:"agents"`
		}
		if st, err := c.call(t.Context(), http.MethodGet, "/api/v1/agents?pageSize=100", nil, &page); err != nil || st != http.StatusOK {
			return false
		}
		fetched := 0
		for _, a := range page.Agents {
			if a.VersionSeq > 0 {
				fetched++
			}
		}
		return fetched == 20
	})

	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"-url", base, "-token", token, "-clients", "20", "-duration", "3s",
		"-write-ratio", "0.2", "-submit-url", "http://{ip}:9/", "-settle", "15s", "-allow-shed", "-json"}, &stdout, &stderr)
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if code != bench.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	}
	// Under -race on a busy machine the search gate may shed a few reads
	// (503 with Retry-After, counted as shed); any other 5xx fails.
	if rep.ServerErrors != rep.Shed || rep.Shed != rep.Statuses["503"] || rep.TransportErrs != 0 || rep.Requests < 100 {
		t.Fatalf("%d 5xx (%d shed), %d transport errors, %d requests\n%s", rep.ServerErrors, rep.Shed, rep.TransportErrs, rep.Requests, stdout.String())
	}
	for _, op := range append(append([]string{}, readOps...), writeOps...) {
		o := rep.Operations[op]
		if o.Requests == 0 || o.MaxMs <= 0 || o.P50ms > o.P99ms || o.P99ms > o.MaxMs {
			t.Errorf("%s: %+v", op, o)
		}
	}
	// Reads answer 200 (a search of a word nothing carries is an empty
	// 200 too); submissions of fresh URLs are all accepted.
	for _, op := range readOps {
		if o := rep.Operations[op]; o.Statuses["200"] != o.Requests {
			t.Errorf("%s: statuses %v of %d requests", op, o.Statuses, o.Requests)
		}
	}
	if o := rep.Operations[opSubmit]; o.Statuses["202"] != o.Requests {
		t.Errorf("submit: statuses %v of %d requests", o.Statuses, o.Requests)
	}
	if g := rep.Goroutines; g.Before <= 0 || g.Settled-g.Before > float64(rep.GoroutineSlack) || rep.RSSBytes.After <= 0 {
		t.Errorf("goroutines %+v (slack %d), memory %+v", g, rep.GoroutineSlack, rep.RSSBytes)
	}
	t.Logf("%d requests, %.0f req/s; goroutines %+v", rep.Requests, rep.RequestsPerSec, rep.Goroutines)

	// What the run submitted is gone again: each accepted submission was
	// removed, with the run named in the audit log.
	if rep.Created != rep.Operations[opSubmit].Statuses["202"] || rep.Created == 0 || rep.Removed != rep.Created {
		t.Errorf("created %d (202s: %d), removed %d", rep.Created, rep.Operations[opSubmit].Statuses["202"], rep.Removed)
	}
	countStatus := func(status string) int {
		var page struct {
			TotalSize int `json:"totalSize"`
		}
		if st, err := c.call(t.Context(), http.MethodGet, "/api/v1/agents?pageSize=1&status="+status, nil, &page); err != nil || st != 200 {
			t.Fatalf("list %s: %d %v", status, st, err)
		}
		return page.TotalSize
	}
	// The listing follows the index, a moment behind SQL.
	polltest.Until(t, "the removals to show in the listing", 30*time.Second, func() bool {
		return countStatus("removed") == rep.Created && countStatus("pending")+countStatus("approved") == 20
	})

	// -keep leaves them and lists their ids; -remove takes them away later.
	keep := filepath.Join(t.TempDir(), "kept.txt")
	stdout.Reset()
	stderr.Reset()
	code = Run(t.Context(), []string{"-url", base, "-token", token, "-clients", "4", "-duration", "1s",
		"-write-ratio", "1", "-submit-url", "http://{ip}:9/", "-settle", "15s", "-allow-shed", "-keep", "-keep-file", keep}, &stdout, &stderr)
	if code != bench.ExitOK || !strings.Contains(stdout.String(), "kept (ids in "+keep+")") ||
		!strings.Contains(stderr.String(), "-remove "+keep) {
		t.Fatalf("-keep run: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	ids, err := readIDs(keep)
	if err != nil || len(ids) == 0 {
		t.Fatalf("kept ids %v %v", ids, err)
	}
	var before int
	polltest.Until(t, "the kept agents to show in the listing", 30*time.Second, func() bool {
		before = countStatus("removed")
		return countStatus("pending")+countStatus("approved") == 20+len(ids)
	})
	stdout.Reset()
	if code := Run(t.Context(), []string{"-url", base, "-token", token, "-remove", keep}, &stdout, &stderr); code != bench.ExitOK ||
		stdout.String() != fmt.Sprintf("removed %d of %d agents listed in %s\n", len(ids), len(ids), keep) {
		t.Fatalf("-remove: exit %d %q %q", code, stdout.String(), stderr.String())
	}
	polltest.Until(t, "the -remove removals to show in the listing", 30*time.Second, func() bool {
		return countStatus("removed")-before == len(ids)
	})
}

func TestParseRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-url", "ftp://x"},
		{"-clients", "0"},
		{"-duration", "0s"},
		{"-write-ratio", "1.5"},
		{"-write-ratio", "0.1"}, // writes without a token
		{"-token", "t", "-submit-url", "https://fixed.example.com/"},
		{"extra"},
	} {
		var stderr bytes.Buffer
		if code := Run(t.Context(), args, &bytes.Buffer{}, &stderr); code != bench.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, bench.ExitUsage)
		}
	}
}

func TestSubmitURLsDistinct(t *testing.T) {
	p := &pool{runID: 1}
	hosts := map[string]bool{}
	// Past 254×256, where the second octet first turns over.
	for range 70000 {
		hosts[p.submitURL("{ip}")] = true
	}
	if len(hosts) != 70000 {
		t.Fatalf("%d distinct addresses of 70000", len(hosts))
	}
	if got := p.submitURL("https://load-{n}.example.com/"); got != "https://load-00000001-70001.example.com/" {
		t.Fatalf("{n}: %s", got)
	}
}
