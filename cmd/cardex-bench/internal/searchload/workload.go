package searchload

import (
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"

	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/cardexhq/cardex/search/corpus"
)

// queryGen makes queries of 1–3 words taken from one skill's name and
// description of a corpus agent, each distinct from every earlier one.
type queryGen struct {
	mu     sync.Mutex
	r      *rand.Rand
	skills [][]string // the words of sampled skills
	seen   map[string]bool
}

// stopWords are left out of queries: they name nothing.
var stopWords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "from": true, "into": true,
	"your": true, "you": true, "its": true, "that": true, "this": true, "are": true, "per": true, "any": true}

func newQueryGen(seed uint64, agents int) *queryGen {
	g := corpus.New(seed)
	q := &queryGen{r: rand.New(rand.NewPCG(seed, 0x7365617263686c64)), seen: map[string]bool{}}
	for i := range min(agents, 5000) {
		a := g.Agent(i * max(1, agents/5000))
		if a.Card == nil {
			continue
		}
		for _, s := range a.Card.Skills {
			var ws []string
			for w := range strings.FieldsFuncSeq(strings.ToLower(s.Name+" "+s.Description), func(r rune) bool { return !unicode.IsLetter(r) }) {
				if len(w) >= 3 && !stopWords[w] && !slices.Contains(ws, w) {
					ws = append(ws, w)
				}
			}
			if len(ws) > 0 {
				q.skills = append(q.skills, ws)
			}
		}
	}
	return q
}

// next is a query not made before (after many tries on a small corpus it
// may repeat one; ok says whether it is new).
func (q *queryGen) next() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for range 100 {
		ws := q.skills[q.r.IntN(len(q.skills))]
		n := min(len(ws), 1+q.r.IntN(3))
		pick := make([]string, 0, n)
		for _, i := range q.r.Perm(len(ws))[:n] {
			pick = append(pick, ws[i])
		}
		s := strings.Join(pick, " ")
		if !q.seen[s] {
			q.seen[s] = true
			return s, true
		}
	}
	return "", false
}

// result is one measured run.
type result struct {
	Workload string `json:"workload"`
	// Phase is when the run was, with -defaults: after-approval or
	// steady.
	Phase string `json:"phase,omitempty"`
	// Clients is the number of clients on each replica.
	Clients int `json:"clients"`
	// The answers of all replicas together.
	answers
	LoadAvgStart float64 `json:"loadAverageStart"`
	LoadAvgEnd   float64 `json:"loadAverageEnd"`
	// Replicas are each replica's own numbers when there are several
	// (the fields above are then their total).
	Replicas []replicaResult `json:"replicas,omitempty"`
}

// replicaResult is one replica's share of a run: the answers its own
// clients got, its CPU time from /proc, its probes during the run and its
// RSS at the end.
type replicaResult struct {
	Replica int `json:"replica"`
	answers
	RSSBytes int64 `json:"serverRssAfterRun"`
}

// answers are what clients got from one server, or from all together, in
// one run, and what the server spent on them.
type answers struct {
	Requests    int            `json:"requests"`
	PerSecond   float64        `json:"requestsPerSecond"`
	P50ms       float64        `json:"p50ms"`
	P99ms       float64        `json:"p99ms"`
	Statuses    map[string]int `json:"statuses"`
	NonOK       int            `json:"non200"`
	Transport   int            `json:"transportErrors"`
	Bad5xx      int            `json:"serverErrorsWithoutRetryAfter"`
	CPUmsPerReq float64        `json:"serverCpuMsPerRequest"`
	// Probes is how many liveness probes the server(s) made during the
	// run.
	Probes float64 `json:"probes"`
}

// answersOf sums up a run of elapsed: the latencies and statuses the
// clients got, their transport errors and 5xx without Retry-After, and
// the servers' CPU time and probes.
func answersOf(lat []time.Duration, statuses map[string]int, transport, bad int, cpu time.Duration, probes float64, elapsed time.Duration) answers {
	a := answers{Requests: len(lat), PerSecond: float64(len(lat)) / elapsed.Seconds(), Statuses: statuses,
		NonOK: len(lat) - statuses["200"], Transport: transport, Bad5xx: bad, Probes: probes}
	if len(lat) > 0 {
		a.P50ms, a.P99ms = percentiles(lat)
		a.CPUmsPerReq = bench.Ms(cpu) / float64(len(lat))
	}
	return a
}

// serverSample is what a server has spent so far: its CPU time and
// resident set (/proc) and the liveness probes it has made (/metrics).
type serverSample struct {
	cpu    time.Duration
	rss    int64
	probes float64
}

func sample(ctx context.Context, c *http.Client, s *bench.Server) (serverSample, error) {
	cpu, rss, err := bench.ProcStat(s.Cmd.Process.Pid)
	if err != nil {
		return serverSample{}, err
	}
	n, err := probes(ctx, c, s)
	if err != nil {
		return serverSample{}, err
	}
	return serverSample{cpu: cpu, rss: rss, probes: n}, nil
}

// tally is what one server's clients saw during a run.
type tally struct {
	mu        sync.Mutex
	lat       []time.Duration
	statuses  map[string]int
	transport int
	bad       int
	cpu       time.Duration // the server's CPU time during the run
	probes    float64       // the probes it made during the run
	rss       int64         // its RSS at the end
}

// percentiles sorts lat and returns its p50 and p99 in ms.
func percentiles(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return bench.Ms(bench.Percentile(lat, 50)), bench.Ms(bench.Percentile(lat, 99))
}

// runLoad sends GET /api/v1/agents?q=…&pageSize=20 from clients goroutines
// on each server at once for d, each taking its next query from next.
func runLoad(ctx context.Context, servers []*bench.Server, workload string, clients int, d time.Duration, next func() string) (result, error) {
	res := result{Workload: workload, Clients: clients, LoadAvgStart: bench.LoadAvg()}
	c := &http.Client{Timeout: 30 * time.Second}
	tallies := make([]*tally, len(servers))
	before := make([]serverSample, len(servers))
	for i, s := range servers {
		tallies[i] = &tally{statuses: map[string]int{}}
		var err error
		if before[i], err = sample(ctx, c, s); err != nil {
			return res, err
		}
	}
	runCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range servers {
		// Each server has its own clients and connections.
		tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
		defer tr.CloseIdleConnections()
		sc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		t := tallies[i]
		for range clients {
			wg.Go(func() { load(ctx, sc, s, next, t) })
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	res.LoadAvgEnd = bench.LoadAvg()
	var all []time.Duration
	var cpu time.Duration
	statuses := map[string]int{}
	var transport, bad int
	var probed float64
	for i, s := range servers {
		t := tallies[i]
		after, err := sample(runCtx, c, s)
		if err != nil {
			return res, err
		}
		t.cpu, t.probes, t.rss = after.cpu-before[i].cpu, after.probes-before[i].probes, after.rss
		all = append(all, t.lat...)
		cpu += t.cpu
		for k, v := range t.statuses {
			statuses[k] += v
		}
		transport += t.transport
		bad += t.bad
		probed += t.probes
		if len(servers) > 1 {
			res.Replicas = append(res.Replicas, replicaResult{Replica: i + 1, RSSBytes: t.rss,
				answers: answersOf(t.lat, t.statuses, t.transport, t.bad, t.cpu, t.probes, elapsed)})
		}
	}
	res.answers = answersOf(all, statuses, transport, bad, cpu, probed, elapsed)
	return res, nil
}

// load is one client: queries to s until ctx ends, counted in t.
func load(ctx context.Context, c *http.Client, s *bench.Server, next func() string, t *tally) {
	var mine []time.Duration
	statuses := map[string]int{}
	transport, bad := 0, 0
	for ctx.Err() == nil {
		u := s.Base + "/api/v1/agents?pageSize=20&q=" + url.QueryEscape(next())
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, u, nil)
		t0 := time.Now()
		r, err := c.Do(req)
		if err != nil {
			transport++
			continue
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		mine = append(mine, time.Since(t0))
		statuses[strconv.Itoa(r.StatusCode)]++
		if r.StatusCode >= 500 && (r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "") {
			bad++
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lat = append(t.lat, mine...)
	for k, v := range statuses {
		t.statuses[k] += v
	}
	t.transport += transport
	t.bad += bad
}

// setupTimes are the durations of the preparation steps.
type setupTimes struct {
	Submit       time.Duration `json:"submit"`
	CrawlApprove time.Duration `json:"crawlAndApprove"`
	// With -defaults: from the first submission until every agent was
	// crawled once (Crawled), and the approvals one request each
	// (-approve-single) and through the bulk API, timed apart.
	Crawled        time.Duration `json:"crawled,omitempty"`
	ApprovedSingle int           `json:"approvedSingle,omitempty"`
	ApproveSingle  time.Duration `json:"approveSingle,omitempty"`
	ApprovedBulk   int           `json:"approvedBulk,omitempty"`
	ApproveBulk    time.Duration `json:"approveBulk,omitempty"`
	Index          time.Duration `json:"indexCatchUp"`
	// Steady is how long after the index caught up the server took to
	// settle (-defaults: no crawl due, the first probe round done).
	Steady time.Duration `json:"steady,omitempty"`
}

// Stores a run can measure.
const (
	storeSQLite   = "sqlite"
	storePostgres = "postgres"
)

// report is the whole measurement.
type report struct {
	Agents int `json:"agents"`
	// Store is the servers' store: sqlite, or postgres with -database-url.
	Store string `json:"store"`
	// Replicas is how many servers ran on the store, each loaded by its
	// own clients.
	Replicas int `json:"replicas"`
	// Database is the PostgreSQL database the run created and dropped.
	Database string `json:"database,omitempty"`
	// Defaults: the server ran with the crawler and the prober at their
	// defaults (-defaults).
	Defaults bool       `json:"defaults,omitempty"`
	Setup    setupTimes `json:"setup"`
	Runs     []result   `json:"runs"`
	// RSSBytes is the server's RSS after the runs, the replicas' total
	// when there are several.
	RSSBytes int64 `json:"serverRssAfterRuns"`
	// Probes is how many liveness probes the server made in all (the
	// replicas together).
	Probes float64 `json:"probes"`
	// ReplicaTotals are each replica's RSS and probes when there are
	// several.
	ReplicaTotals []replicaTotal `json:"replicaTotals,omitempty"`
	Reindex       float64        `json:"reindexSeconds,omitempty"`
	ReindexCPU    float64        `json:"reindexCpuSeconds,omitempty"`
	Started       time.Time      `json:"started"`
	Machine       string         `json:"machine"`
}

// replicaTotal is one replica's RSS after the runs and the probes it
// made in all.
type replicaTotal struct {
	Replica  int     `json:"replica"`
	RSSBytes int64   `json:"serverRssAfterRuns"`
	Probes   float64 `json:"probes"`
}

func (r *report) failures() int {
	n := 0
	for _, x := range r.Runs {
		n += x.Transport + x.Bad5xx
	}
	return n
}

func (r *report) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return bench.WriteJSON(w, r)
	}
	replicas := fmt.Sprintf("%d replica", r.Replicas)
	if r.Replicas != 1 {
		replicas += "s"
	}
	if r.Database != "" {
		replicas += " on database " + r.Database
	}
	fmt.Fprintf(w, "%d agents (%s); store %s, %s; setup: submit %s, crawl+approve %s, index catch-up %s\n\n", r.Agents, r.Machine, r.Store, replicas,
		r.Setup.Submit.Round(time.Second), r.Setup.CrawlApprove.Round(time.Second), r.Setup.Index.Round(time.Second))
	if st := r.Setup; st.Crawled > 0 {
		fmt.Fprintf(w, "submitted and crawled once: %d agents in %s (%.0f/s)", r.Agents, st.Crawled.Round(time.Second), float64(r.Agents)/st.Crawled.Seconds())
		if st.ApprovedSingle > 0 {
			fmt.Fprintf(w, "; approved one by one: %d in %s (%.0f/s)", st.ApprovedSingle, st.ApproveSingle.Round(time.Second), float64(st.ApprovedSingle)/st.ApproveSingle.Seconds())
		}
		if st.ApprovedBulk > 0 {
			fmt.Fprintf(w, "; approved in bulk: %d in %s (%.0f/s)", st.ApprovedBulk, st.ApproveBulk.Round(time.Second), float64(st.ApprovedBulk)/st.ApproveBulk.Seconds())
		}
		fmt.Fprint(w, "\n\n")
	}
	multi := r.Replicas > 1
	switch {
	case multi:
		// Each replica's row, then their total; clients are per replica.
		fmt.Fprintf(w, "crawler and prober at their defaults; steady state %s after every replica's index caught up\n\n", r.Setup.Steady.Round(time.Second))
		fmt.Fprintln(w, "| workload | phase | clients per replica | replica | req/s | p50 ms | p99 ms | non-200 | server CPU-ms/req | RSS MiB | load avg | probes |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	case r.Defaults:
		// The phases and the background work each run saw.
		fmt.Fprintf(w, "crawler and prober at their defaults; steady state %s after the index caught up\n\n", r.Setup.Steady.Round(time.Second))
		fmt.Fprintln(w, "| workload | phase | clients | req/s | p50 ms | p99 ms | non-200 | server CPU-ms/req | load avg | probes |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	default:
		fmt.Fprintln(w, "| workload | clients | req/s | p50 ms | p99 ms | non-200 | server CPU-ms/req | load avg |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	}
	for _, x := range r.Runs {
		non := nonOK(x.NonOK, x.Statuses)
		switch {
		case multi:
			var rss int64
			for _, y := range x.Replicas {
				rss += y.RSSBytes
				fmt.Fprintf(w, "| %s | %s | %d | %d | %.0f | %.1f | %.1f | %s | %.2f | %d | %.1f → %.1f | %.0f |\n", x.Workload, x.Phase, x.Clients, y.Replica,
					y.PerSecond, y.P50ms, y.P99ms, nonOK(y.NonOK, y.Statuses), y.CPUmsPerReq, y.RSSBytes>>20, x.LoadAvgStart, x.LoadAvgEnd, y.Probes)
			}
			fmt.Fprintf(w, "| %s | %s | %d | total | %.0f | %.1f | %.1f | %s | %.2f | %d | %.1f → %.1f | %.0f |\n", x.Workload, x.Phase, x.Clients,
				x.PerSecond, x.P50ms, x.P99ms, non, x.CPUmsPerReq, rss>>20, x.LoadAvgStart, x.LoadAvgEnd, x.Probes)
		case r.Defaults:
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.1f | %.1f | %s | %.2f | %.1f → %.1f | %.0f |\n", x.Workload, x.Phase, x.Clients, x.PerSecond,
				x.P50ms, x.P99ms, non, x.CPUmsPerReq, x.LoadAvgStart, x.LoadAvgEnd, x.Probes)
		default:
			fmt.Fprintf(w, "| %s | %d | %.0f | %.1f | %.1f | %s | %.2f | %.1f → %.1f |\n", x.Workload, x.Clients, x.PerSecond,
				x.P50ms, x.P99ms, non, x.CPUmsPerReq, x.LoadAvgStart, x.LoadAvgEnd)
		}
	}
	if multi {
		var each []string
		for _, t := range r.ReplicaTotals {
			each = append(each, fmt.Sprintf("replica %d %d MiB, %.0f probes", t.Replica, t.RSSBytes>>20, t.Probes))
		}
		fmt.Fprintf(w, "\nserver RSS after the runs: %d MiB in all (%s); liveness probes: %.0f\n", r.RSSBytes>>20, strings.Join(each, "; "), r.Probes)
	} else {
		fmt.Fprintf(w, "\nserver RSS after the runs: %d MiB; liveness probes: %.0f\n", r.RSSBytes>>20, r.Probes)
	}
	if r.Reindex > 0 {
		of := ""
		if multi {
			of = " (replica 1)"
		}
		fmt.Fprintf(w, "index rebuild%s: %.1f s wall, %.1f CPU-s\n", of, r.Reindex, r.ReindexCPU)
	}
	return nil
}

// nonOK is a run's count of non-200 answers with their statuses.
func nonOK(n int, statuses map[string]int) string {
	var codes []string
	for k, v := range statuses {
		if k != "200" {
			codes = append(codes, fmt.Sprintf("%s×%d", k, v))
		}
	}
	slices.Sort(codes)
	non := strconv.Itoa(n)
	if len(codes) > 0 {
		non += " (" + strings.Join(codes, ", ") + ")"
	}
	return non
}

func machine() string {
	cpus := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		cpus = strings.Count(string(b), "\nprocessor") + 1
	}
	return fmt.Sprintf("%d CPUs", cpus)
}
