package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to read leases directly
	yaml "github.com/oasdiff/yaml3"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// Crawl settings of the operations tests: ticks and intervals short enough
// for re-crawls within a test, a lease short enough that a killed server's
// agents come back quickly (and at least twice the fetch timeout, as
// `cardex serve` requires).
const (
	opsInterval = 5 * time.Second
	opsLeaseTTL = 6 * time.Second
	opsTimeout  = 3 * time.Second
)

func opsCrawlArgs() []string {
	return []string{"--read-rate", "0", "--crawl-tick", "1s",
		"--crawl-interval", opsInterval.String(), "--crawl-min-interval", opsInterval.String(),
		"--lease-ttl", opsLeaseTTL.String(), "--crawl-timeout", opsTimeout.String(), "--crawl-workers", "16", "--crawl-per-host", "4"}
}

// submitAll submits every URL through c (16 at a time) and returns the
// acknowledged ids by URL.
func submitAll(t *testing.T, c *opsClient, urls []string) map[string]string {
	t.Helper()
	var (
		mu  sync.Mutex
		ids = map[string]string{}
		wg  sync.WaitGroup
	)
	jobs := make(chan string)
	for range 16 {
		wg.Go(func() {
			for u := range jobs {
				var a opsAgent
				st, err := c.do(t.Context(), http.MethodPost, "/api/v1/agents", map[string]string{"cardUrl": u}, &a)
				if err != nil || st != http.StatusAccepted {
					t.Errorf("submit %s: status %d, %v", u, st, err)
					continue
				}
				mu.Lock()
				ids[u] = a.ID
				mu.Unlock()
			}
		})
	}
	for _, u := range urls {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

// approveAll approves each agent at its current version, re-reading the
// version when a changing agent moved on between the read and the approval
// (409 version-conflict), a bounded number of times.
func approveAll(t *testing.T, c *opsClient, agentIDs []string) {
	t.Helper()
	var wg sync.WaitGroup
	jobs := make(chan string)
	for range 8 {
		wg.Go(func() {
			for id := range jobs {
				approved := false
				for range 10 {
					var a opsAgent
					if st, err := c.do(t.Context(), http.MethodGet, "/api/v1/agents/"+id, nil, &a); err != nil || st != http.StatusOK {
						t.Errorf("get %s: status %d, %v", id, st, err)
						break
					}
					st, err := c.do(t.Context(), http.MethodPost, "/api/v1/agents/"+id+"/approve", map[string]int64{"versionSeq": a.VersionSeq}, nil)
					if err != nil {
						t.Errorf("approve %s: %v", id, err)
						break
					}
					if st == http.StatusOK {
						approved = true
						break
					}
					if st != http.StatusConflict {
						t.Errorf("approve %s at %d: status %d", id, a.VersionSeq, st)
						break
					}
				}
				if !approved && !t.Failed() {
					t.Errorf("approve %s: still conflicting after 10 tries", id)
				}
			}
		})
	}
	for _, id := range agentIDs {
		jobs <- id
	}
	close(jobs)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// waitAllFetched polls (bounded) until every agent in ids has a version.
func waitAllFetched(t *testing.T, c *opsClient, ids []string, d time.Duration) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var missing []opsAgent
	var err error
	polltest.Until(t, func() string {
		if len(missing) > 0 && missing[0].LastError != nil {
			return fmt.Sprintf("every agent to have a version: %d of %d without; first: %s: %s %s", len(missing), len(want),
				missing[0].CardURL, missing[0].LastError.Class, missing[0].LastError.Message)
		}
		return fmt.Sprintf("every agent to have a version: %d of %d without (list error: %v)", len(missing), len(want), err)
	}, d, func() bool {
		var all []opsAgent
		if all, err = c.listAll(t.Context(), ""); err != nil {
			return false
		}
		missing = missing[:0]
		for _, a := range all {
			if want[a.ID] && a.VersionSeq == 0 {
				missing = append(missing, a)
			}
		}
		return len(all) >= len(want) && len(missing) == 0
	})
}

// opsQueries are searches both replicas must answer alike: free text,
// filters, both, and the plain list; sorted by name so equal indexes give
// equal pages.
var opsQueries = []string{"q=travel&sort=name", "q=invoices&sort=name", "tag=devops&sort=name",
	"q=Northwind&sort=name", "q=booking&tag=hotels&sort=name", "sort=name"}

// waitSameSearch polls (bounded) until every query answers the same ids,
// in the same order, from every client and from SQL's view when want is
// given (the plain list as admin is every agent).
func waitSameSearch(t *testing.T, clients []*opsClient, wantAll []string, d time.Duration) {
	t.Helper()
	var last string
	want := slices.Sorted(slices.Values(wantAll))
	polltest.Until(t, func() string { return "search to converge: " + last }, d, func() bool {
		for _, q := range opsQueries {
			var first []string
			for i, c := range clients {
				got, err := c.listAll(t.Context(), q)
				if err != nil {
					last = err.Error()
					return false
				}
				if i == 0 {
					first = ids(got)
					if len(first) == 0 {
						last = q + ": no results"
						return false
					}
					if q == "sort=name" && !slices.Equal(slices.Sorted(slices.Values(first)), want) {
						last = fmt.Sprintf("%s: %d ids, want %d", q, len(first), len(want))
						return false
					}
				} else if !slices.Equal(first, ids(got)) {
					last = fmt.Sprintf("%s: %d ids from %s, %d from %s", q, len(first), clients[0].base, len(got), c.base)
					return false
				}
			}
		}
		return true
	})
}

// leasesOf counts agents whose lease is held by process pid and not yet
// expired (the owner is hostname/pid/random, registry.DefaultOwner).
func leasesOf(ctx context.Context, db *sql.DB, pid int) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM agents WHERE lease_owner LIKE $1 AND lease_until > now()",
		"%/"+strconv.Itoa(pid)+"/%").Scan(&n)
	return n, err
}

// Two replicas on one PostgreSQL database, each with its own index
// (docs/design.md: the database is shared, the index per process): they never
// fetch one agent at once nor both within an interval, answer the same
// searches once converged, and when one is killed mid-crawl its leases
// expire and the other fetches everything left (docs/threats.md F.62).
func TestTwoReplicasShareOnePostgres(t *testing.T) {
	t.Parallel() // subprocesses mostly wait on timers and I/O: overlap them with the other operations tests
	dbURL := registrytest.PostgresURL(t)
	bin := procBin(t)
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 8})
	const agents = 200
	urls := make([]string, 0, agents)
	handles := map[string]*agentfleet.AgentHandle{}
	for i := range agents {
		a := agentfleet.Agent{Behavior: agentfleet.Conditional}
		switch i % 4 {
		case 0:
			a = agentfleet.Agent{Behavior: agentfleet.Changing, ChangeEvery: 2}
		case 1:
			a = agentfleet.Agent{Behavior: agentfleet.Normal}
		}
		h := fleet.Add(a)
		urls = append(urls, h.URL())
		handles[h.URL()] = h
	}

	// A migrates the fresh database; B starts on it once A is ready.
	a := startServer(t, bin, t.TempDir(), append([]string{"--database-url", dbURL}, opsCrawlArgs()...)...)
	a.waitReady(t, time.Minute)
	b := startServer(t, bin, t.TempDir(), append([]string{"--database-url", dbURL}, opsCrawlArgs()...)...)
	b.waitReady(t, time.Minute)
	token := procToken(t, bin, t.TempDir(), dbURL)
	ca, cb := newOpsClient(a.base, token), newOpsClient(b.base, token)

	start := time.Now()
	byURL := submitAll(t, ca, urls)
	all := make([]string, 0, agents)
	for _, id := range byURL {
		all = append(all, id)
	}
	waitAllFetched(t, cb, all, 45*time.Second)
	t.Logf("%d agents submitted and fetched in %s", agents, time.Since(start).Round(time.Millisecond))
	approveAll(t, ca, all)
	t.Logf("approved at %s", time.Since(start).Round(time.Millisecond))
	waitSameSearch(t, []*opsClient{ca, cb}, all, 30*time.Second)
	t.Logf("search converged at %s", time.Since(start).Round(time.Millisecond))
	// Anonymous readers see the approved catalogue alike on both.
	waitSameSearch(t, []*opsClient{newOpsClient(a.base, ""), newOpsClient(b.base, "")}, all, 30*time.Second)

	// Leases kept every fetch of an agent single (the fleet counts peak
	// concurrency per agent), and the shared next-fetch time kept the two
	// replicas from each crawling it every interval: an agent is fetched
	// at most once per interval plus the first fetch and one re-crawl in
	// flight at the end.
	elapsed := time.Since(start)
	limit := int64(elapsed/opsInterval) + 2
	for u, h := range handles {
		if h.MaxInFlight() > 1 {
			t.Errorf("%s (%s): %d fetches at once", byURL[u], u, h.MaxInFlight())
		}
		if h.Requests() < 1 || h.Requests() > limit {
			t.Errorf("%s (%s): %d requests in %s, want 1..%d", byURL[u], u, h.Requests(), elapsed.Round(time.Second), limit)
		}
	}

	// Kill B while it holds leases: a second batch through B, of normal
	// agents and a few slow ones (a card dripped over a nominal 150 ms,
	// well within the fetch timeout; few, as every byte is a timer wake-up)
	// so fetches are in flight. Everything B held must come back to A
	// after the lease TTL, and every agent must end with a version.
	card := agentfleet.GenerateCard(0, "http://127.0.0.1:65535", "1.0.0")
	slow := agentfleet.Start(t, agentfleet.Options{Hosts: 2, BaseAddr: "127.0.1.1", DripInterval: 150 * time.Millisecond / time.Duration(len(card))})
	var slowURLs []string
	var slowHandles []*agentfleet.AgentHandle
	for i := range 40 {
		var h *agentfleet.AgentHandle
		if i%5 == 0 {
			h = slow.Add(agentfleet.Agent{Behavior: agentfleet.SlowDrip})
		} else {
			h = slow.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
		}
		slowURLs = append(slowURLs, h.URL())
		slowHandles = append(slowHandles, h)
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	slowIDs := submitAll(t, cb, slowURLs)
	polltest.Until(t, "replica B to hold a lease", 30*time.Second, func() bool {
		n, err := leasesOf(t.Context(), db, b.cmd.Process.Pid)
		return err == nil && n > 0
	})
	b.kill(t)
	held, err := leasesOf(t.Context(), db, b.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replica B killed holding %d live leases at %s", held, time.Since(start).Round(time.Millisecond))
	var ids2 []string
	for _, id := range slowIDs {
		ids2 = append(ids2, id)
	}
	waitAllFetched(t, ca, append(ids2, all...), 60*time.Second)
	if n, err := leasesOf(t.Context(), db, b.cmd.Process.Pid); err != nil || n != 0 {
		t.Fatalf("the dead replica still holds %d live leases (%v)", n, err)
	}
	t.Logf("all fetched after the kill at %s", time.Since(start).Round(time.Millisecond))
	for _, h := range slowHandles {
		if h.MaxInFlight() > 1 {
			t.Errorf("%s: %d fetches at once", h.URL(), h.MaxInFlight())
		}
	}
}

// composeFile is the part of docker-compose.yml the check reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       any               `yaml:"build"`
		Entrypoint  []string          `yaml:"entrypoint"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		NetworkMode string            `yaml:"network_mode"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// docker-compose.yml is the deployment TestTwoReplicasShareOnePostgres
// runs with processes (these machines have no Docker engine, so the file
// is checked, not run): PostgreSQL 15, two replicas on one database URL
// with their own data volumes and ports, and the fleet they may reach.
// Every CARDEX_* variable must be a real `cardex serve` setting and the
// replicas' settings must pass the server's own validation.
func TestComposeMirrorsTheReplicasTest(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	code, help, _ := runCLI(t, "", "serve", "--help")
	if code != exitOK {
		t.Fatalf("serve --help: exit %d", code)
	}
	settings := map[string]bool{}
	for _, m := range regexp.MustCompile(`env: (CARDEX_[A-Z_]+)`).FindAllStringSubmatch(help, -1) {
		settings[m[1]] = true
	}
	if !settings["CARDEX_DATABASE_URL"] || !settings["CARDEX_ALLOW_NETWORKS"] {
		t.Fatalf("serve --help lists %d settings, without the store or network ones:\n%s", len(settings), help)
	}
	if pg := f.Services["postgres"]; pg.Image != "postgres:15" {
		t.Errorf("postgres image %q, want postgres:15", pg.Image)
	}
	fleet := f.Services["fleet"]
	if fleet.Build == nil || len(fleet.Entrypoint) != 1 || fleet.Entrypoint[0] != "cardex-fleet" {
		t.Errorf("fleet: build %v, entrypoint %v", fleet.Build, fleet.Entrypoint)
	}
	var dbURLs, volumes, addrs []string
	for _, name := range []string{"cardex-a", "cardex-b"} {
		s, ok := f.Services[name]
		if !ok {
			t.Fatalf("no service %s", name)
		}
		if s.Image != fleet.Image || s.NetworkMode != "service:fleet" {
			t.Errorf("%s: image %q (fleet builds %q), network_mode %q", name, s.Image, fleet.Image, s.NetworkMode)
		}
		for k := range s.Environment {
			if !settings[k] {
				t.Errorf("%s: %s is not a cardex serve setting", name, k)
			}
		}
		// The server's own parsing and validation accept the settings.
		if len(s.Command) == 0 || s.Command[0] != "serve" {
			t.Fatalf("%s: command %v", name, s.Command)
		}
		data := t.TempDir()
		args := append(slices.Clone(s.Command[1:]), "--data", data)
		env := s.Environment
		cfg, err := parseServeConfig(args, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !cfg.AllowInsecureHTTP || len(cfg.AllowNetworks) == 0 || cfg.Store.databaseURL == "" {
			t.Errorf("%s: insecure http %v, networks %v, database %q", name, cfg.AllowInsecureHTTP, cfg.AllowNetworks, cfg.Store.databaseURL)
		}
		dbURLs = append(dbURLs, cfg.Store.databaseURL)
		addrs = append(addrs, cfg.Addr)
		if len(s.Volumes) != 1 || !strings.HasSuffix(s.Volumes[0], ":/data") {
			t.Errorf("%s: volumes %v, want one at /data", name, s.Volumes)
		} else {
			volumes = append(volumes, s.Volumes[0])
		}
	}
	if len(dbURLs) != 2 || dbURLs[0] != dbURLs[1] {
		t.Errorf("the replicas use different databases: %v", dbURLs)
	} else if u, err := url.Parse(dbURLs[0]); err != nil || u.Hostname() != "postgres" {
		t.Errorf("database URL %q does not name the postgres service", dbURLs[0])
	}
	if len(volumes) != 2 || volumes[0] == volumes[1] {
		t.Errorf("the replicas share a data volume (each needs its own index): %v", volumes)
	}
	if len(addrs) != 2 || addrs[0] == addrs[1] {
		t.Errorf("the replicas listen on the same address in one network namespace: %v", addrs)
	}
	for _, a := range addrs {
		_, port, _ := strings.Cut(a, ":")
		if !slices.Contains(fleet.Ports, port+":"+port) {
			t.Errorf("replica port %s is not published on the fleet service (ports %v)", port, fleet.Ports)
		}
	}
}

// The Dockerfile's default command is a valid `cardex serve` invocation.
func TestDockerfileDefaultCommand(t *testing.T) {
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var cmd, entry []string
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "CMD "); ok {
			if err := json.Unmarshal([]byte(rest), &cmd); err != nil {
				t.Fatalf("CMD: %v", err)
			}
		}
		if rest, ok := strings.CutPrefix(line, "ENTRYPOINT "); ok {
			if err := json.Unmarshal([]byte(rest), &entry); err != nil {
				t.Fatalf("ENTRYPOINT: %v", err)
			}
		}
	}
	if !slices.Equal(entry, []string{"cardex"}) || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("ENTRYPOINT %v CMD %v", entry, cmd)
	}
	cfg, err := parseServeConfig(cmd[1:], func(string) string { return "" }, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.Store.data != "/data" || !strings.Contains(string(raw), "EXPOSE 8080") || !strings.Contains(string(raw), `VOLUME ["/data"]`) {
		t.Fatalf("addr %q data %q", cfg.Addr, cfg.Store.data)
	}
}
