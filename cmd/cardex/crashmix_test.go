package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/internal/polltest"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// opsDB reads a server's database directly: SQLite read-only beside the
// running server (WAL readers do not block it), or PostgreSQL.
type opsDB struct {
	db       *sql.DB
	postgres bool
}

func openOpsDB(t *testing.T, data, dbURL string) *opsDB {
	t.Helper()
	var (
		db  *sql.DB
		err error
	)
	if dbURL != "" {
		db, err = sql.Open("pgx", dbURL)
	} else {
		db, err = sql.Open("sqlite3", "file:"+filepath.Join(data, "cardex.db")+"?mode=ro&_busy_timeout=5000")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &opsDB{db: db, postgres: dbURL != ""}
}

// ph is the dialect's n-th placeholder.
func (d *opsDB) ph(n int) string {
	if d.postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// deadLeases counts agents still leased by the process pid (owner
// hostname/pid/random, registry.DefaultOwner). A fetch recorded clears its
// lease, so once the killed server's agents are reclaimed and fetched none
// is left.
func (d *opsDB) deadLeases(ctx context.Context, pid int) (int, error) {
	var n int
	err := d.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM agents WHERE lease_owner LIKE "+d.ph(1), "%/"+strconv.Itoa(pid)+"/%").Scan(&n)
	return n, err
}

// leasedBy lists the agents leased by process pid.
func (d *opsDB) leasedBy(ctx context.Context, pid int) ([]string, error) {
	rows, err := d.db.QueryContext(ctx, "SELECT id FROM agents WHERE lease_owner LIKE "+d.ph(1), "%/"+strconv.Itoa(pid)+"/%")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// describe is an agent's crawl state, for failure messages.
func describe(a opsAgent) string {
	s := fmt.Sprintf("%s (%s): version %d, last fetched %v, next fetch %v", a.ID, a.CardURL, a.VersionSeq, a.LastFetchedAt, a.NextFetchAt)
	if a.LastError != nil {
		s += ", last error " + a.LastError.Class + ": " + a.LastError.Message
	}
	return s
}

// sqlIDs is the sorted ids of the agents SQL holds for a viewer: every
// agent not removed (admin), or approved, public and not gone (anonymous).
func (d *opsDB) sqlIDs(ctx context.Context, anonymous bool) ([]string, error) {
	q := "SELECT id FROM agents WHERE status <> 'removed'"
	if anonymous {
		q = "SELECT id FROM agents WHERE status = 'approved' AND visibility = 'public' AND health <> 'gone'"
	}
	rows, err := d.db.QueryContext(ctx, q+" ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// mixedLoad is what the clients had acknowledged when the server died.
type mixedLoad struct {
	mu        sync.Mutex
	submitted map[string]string // id → card URL, 202 with a whole body
	approved  map[string]bool   // id → 200 to its approval
	order     []string          // acknowledged ids, for picking
	first     chan struct{}     // closed at the first acknowledged submission
	firstOnce sync.Once
}

func (m *mixedLoad) counts() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.submitted), len(m.approved)
}

func (m *mixedLoad) pick(r *rand.Rand) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.order) == 0 {
		return "", false
	}
	return m.order[r.IntN(len(m.order))], true
}

// runMixedLoad sends submissions (4 clients), approvals (2) and crawl
// requests (2) until stop closes, recording only whole acknowledgements.
func runMixedLoad(ctx context.Context, c *opsClient, urls []string, stop <-chan struct{}) (*mixedLoad, *sync.WaitGroup) {
	m := &mixedLoad{submitted: map[string]string{}, approved: map[string]bool{}, first: make(chan struct{})}
	jobs := make(chan string, len(urls))
	for _, u := range urls {
		jobs <- u
	}
	close(jobs)
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for u := range jobs {
				if stopped() {
					return
				}
				var a opsAgent
				st, err := c.do(ctx, http.MethodPost, "/api/v1/agents", map[string]string{"cardUrl": u}, &a)
				if err != nil || st != http.StatusAccepted || a.ID == "" {
					continue
				}
				m.mu.Lock()
				m.submitted[a.ID] = u
				m.order = append(m.order, a.ID)
				m.mu.Unlock()
				m.firstOnce.Do(func() { close(m.first) })
			}
		})
	}
	for i := range 4 {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		wg.Go(func() {
			select {
			case <-stop:
				return
			case <-m.first:
			}
			for !stopped() {
				id, _ := m.pick(r)
				if i%2 == 1 {
					c.do(ctx, http.MethodPost, "/api/v1/agents/"+id+"/crawl", map[string]any{}, nil)
					continue
				}
				var a opsAgent
				if st, err := c.do(ctx, http.MethodGet, "/api/v1/agents/"+id, nil, &a); err != nil || st != http.StatusOK || a.VersionSeq == 0 || a.Status != "pending" {
					continue
				}
				st, err := c.do(ctx, http.MethodPost, "/api/v1/agents/"+id+"/approve", map[string]int64{"versionSeq": a.VersionSeq}, nil)
				if err == nil && st == http.StatusOK {
					m.mu.Lock()
					m.approved[id] = true
					m.mu.Unlock()
				}
			}
		})
	}
	return m, &wg
}

// docs/threats.md F.61 and F.62, extended to a mixed load: kill -9 during
// submissions, approvals and crawls; after a restart every acknowledged
// write is there, SQLite passes integrity_check, the index converges to
// SQL, the dead process's leases are all reclaimed and every agent that
// was due is fetched.
func TestCrashDuringMixedLoad(t *testing.T) {
	t.Parallel() // subprocesses mostly wait on timers and I/O: overlap them with the other operations tests
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		crashMixed(t, "")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		crashMixed(t, registrytest.PostgresURL(t))
	})
}

func crashMixed(t *testing.T, dbURL string) {
	bin := procBin(t)
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 4})
	// Hanging agents (headers, then nothing until the fetch times out)
	// keep fetches in flight, so the kill lands with leases held.
	hang := agentfleet.Start(t, agentfleet.Options{Hosts: 1, BaseAddr: "127.0.2.1"})
	var urls []string
	hanging := map[string]bool{}
	for i := range 150 {
		var h *agentfleet.AgentHandle
		switch {
		case i%10 == 1:
			h = hang.Add(agentfleet.Agent{Behavior: agentfleet.HangAfterHeaders})
			hanging[h.URL()] = true
		case i%3 == 0:
			h = fleet.Add(agentfleet.Agent{Behavior: agentfleet.Changing, ChangeEvery: 2})
		default:
			h = fleet.Add(agentfleet.Agent{Behavior: agentfleet.Conditional})
		}
		urls = append(urls, h.URL())
	}
	data := t.TempDir()
	args := opsCrawlArgs()
	if dbURL != "" {
		args = append(args, "--database-url", dbURL)
	}
	srv := startServer(t, bin, data, args...)
	srv.waitReady(t, time.Minute)
	token := procToken(t, bin, data, dbURL)
	c := newOpsClient(srv.base, token)

	db := openOpsDB(t, data, dbURL)
	stop := make(chan struct{})
	load, wg := runMixedLoad(t.Context(), c, urls, stop)
	polltest.Until(t, "40 acknowledged submissions, 10 approvals and a crawl in flight", time.Minute, func() bool {
		s, a := load.counts()
		if s < 40 || a < 10 {
			return false
		}
		n, err := db.deadLeases(t.Context(), srv.cmd.Process.Pid)
		return err == nil && n > 0
	})
	srv.kill(t)
	close(stop)
	wg.Wait()
	killedAt, deadPid := time.Now(), srv.cmd.Process.Pid
	nSub, nApp := load.counts()
	leased, err := db.leasedBy(t.Context(), deadPid)
	held := len(leased)
	if err != nil || held == 0 {
		t.Fatalf("the killed server held %d leases (%v)", held, err)
	}
	t.Logf("killed after %d acknowledged submissions and %d approvals, holding %d leases", nSub, nApp, held)

	srv2 := startServer(t, bin, data, args...)
	srv2.waitReady(t, time.Minute)
	c2 := newOpsClient(srv2.base, token)
	for id, u := range load.submitted {
		var a opsAgent
		if st, err := c2.do(t.Context(), http.MethodGet, "/api/v1/agents/"+id, nil, &a); err != nil || st != http.StatusOK || a.CardURL != u {
			t.Fatalf("acknowledged submission %s (%s): status %d, cardUrl %q, %v", id, u, st, a.CardURL, err)
		}
		if load.approved[id] && a.Status != "approved" {
			t.Fatalf("acknowledged approval of %s: status %q", id, a.Status)
		}
	}

	// Every lease of the dead process is reclaimed: after its TTL the new
	// server claims those agents again and recording the fetch clears them.
	polltest.Until(t, "the dead server's leases to be reclaimed", opsLeaseTTL+30*time.Second, func() bool {
		n, err := db.deadLeases(t.Context(), deadPid)
		return err == nil && n == 0
	})
	// Every agent the dead server was fetching (it claimed them because
	// they were due) is fetched again after the kill, and every agent but
	// the hanging ones has a version; those end with a timeout.
	var last string
	polltest.Until(t, func() string {
		return fmt.Sprintf("the %d agents leased at the kill to be fetched again: %s", len(leased), last)
	}, 45*time.Second, func() bool {
		now, err := c2.listAll(t.Context(), "")
		if err != nil {
			last = err.Error()
			return false
		}
		byID := map[string]opsAgent{}
		for _, a := range now {
			byID[a.ID] = a
			if hanging[a.CardURL] {
				if a.VersionSeq != 0 || a.LastError == nil || a.LastError.Class != "timeout" {
					last = describe(a)
					return false
				}
			} else if a.VersionSeq == 0 {
				last = describe(a)
				return false
			}
		}
		for _, id := range leased {
			if a := byID[id]; a.LastFetchedAt == nil || !a.LastFetchedAt.After(killedAt) {
				last = describe(a)
				return false
			}
		}
		return true
	})

	// The index converges to SQL, for an admin and for anonymous readers
	// (F.62: the reconcile step indexes rows committed before the kill).
	for _, anon := range []bool{false, true} {
		viewer := c2
		if anon {
			viewer = newOpsClient(srv2.base, "")
		}
		polltest.Until(t, func() string { return fmt.Sprintf("the index to equal SQL (anonymous %v): %s", anon, last) }, 30*time.Second, func() bool {
			want, err := db.sqlIDs(t.Context(), anon)
			if err != nil {
				last = err.Error()
				return false
			}
			got, err := viewer.listAll(t.Context(), "")
			if err != nil {
				last = err.Error()
				return false
			}
			g := slices.Sorted(slices.Values(ids(got)))
			last = fmt.Sprintf("index %d, SQL %d", len(g), len(want))
			return len(want) > 0 && slices.Equal(g, want)
		})
		t.Logf("anonymous %v: %s", anon, last)
	}

	srv2.stop(t)
	if dbURL == "" {
		var check string
		if err := db.db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity_check: %q %v", check, err)
		}
	}
}
