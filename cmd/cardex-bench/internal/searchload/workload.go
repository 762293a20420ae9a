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
	Phase        string         `json:"phase,omitempty"`
	Clients      int            `json:"clients"`
	Requests     int            `json:"requests"`
	PerSecond    float64        `json:"requestsPerSecond"`
	P50ms        float64        `json:"p50ms"`
	P99ms        float64        `json:"p99ms"`
	Statuses     map[string]int `json:"statuses"`
	NonOK        int            `json:"non200"`
	Transport    int            `json:"transportErrors"`
	Bad5xx       int            `json:"serverErrorsWithoutRetryAfter"`
	CPUmsPerReq  float64        `json:"serverCpuMsPerRequest"`
	LoadAvgStart float64        `json:"loadAverageStart"`
	LoadAvgEnd   float64        `json:"loadAverageEnd"`
	// Probes is how many liveness probes the server made during the run.
	Probes float64 `json:"probes"`
}

// runLoad sends GET /api/v1/agents?q=…&pageSize=20 from clients goroutines
// for d, each taking its next query from next.
func runLoad(ctx context.Context, s *bench.Server, workload string, clients int, d time.Duration, next func() string) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	res := result{Workload: workload, Clients: clients, Statuses: map[string]int{}, LoadAvgStart: bench.LoadAvg()}
	cpu0, _, err := bench.ProcStat(s.Cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	probes0, err := probes(ctx, c, s)
	if err != nil {
		return res, err
	}
	runCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
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
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, mine...)
			for k, v := range statuses {
				res.Statuses[k] += v
			}
			res.Transport += transport
			res.Bad5xx += bad
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _, err := bench.ProcStat(s.Cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	res.LoadAvgEnd = bench.LoadAvg()
	probes1, err := probes(runCtx, c, s)
	if err != nil {
		return res, err
	}
	res.Probes = probes1 - probes0
	res.Requests = len(lat)
	res.PerSecond = float64(len(lat)) / elapsed.Seconds()
	res.NonOK = len(lat) - res.Statuses["200"]
	if len(lat) > 0 {
		slices.Sort(lat)
		res.P50ms = bench.Ms(bench.Percentile(lat, 50))
		res.P99ms = bench.Ms(bench.Percentile(lat, 99))
		res.CPUmsPerReq = bench.Ms(cpu1-cpu0) / float64(len(lat))
	}
	return res, nil
}

// setupTimes are the durations of the preparation steps.
type setupTimes struct {
	Submit       time.Duration `json:"submit"`
	CrawlApprove time.Duration `json:"crawlAndApprove"`
	Index        time.Duration `json:"indexCatchUp"`
	// Steady is how long after the index caught up the server took to
	// settle (-defaults: no crawl due, the first probe round done).
	Steady time.Duration `json:"steady,omitempty"`
}

// report is the whole measurement.
type report struct {
	Agents int `json:"agents"`
	// Defaults: the server ran with the crawler and the prober at their
	// defaults (-defaults).
	Defaults bool       `json:"defaults,omitempty"`
	Setup    setupTimes `json:"setup"`
	Runs     []result   `json:"runs"`
	RSSBytes int64      `json:"serverRssAfterRuns"`
	// Probes is how many liveness probes the server made in all.
	Probes     float64   `json:"probes"`
	Reindex    float64   `json:"reindexSeconds,omitempty"`
	ReindexCPU float64   `json:"reindexCpuSeconds,omitempty"`
	Started    time.Time `json:"started"`
	Machine    string    `json:"machine"`
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
	fmt.Fprintf(w, "%d agents (%s); setup: submit %s, crawl+approve %s, index catch-up %s\n\n", r.Agents, r.Machine,
		r.Setup.Submit.Round(time.Second), r.Setup.CrawlApprove.Round(time.Second), r.Setup.Index.Round(time.Second))
	if r.Defaults {
		// The phases and the background work each run saw.
		fmt.Fprintf(w, "crawler and prober at their defaults; steady state %s after the index caught up\n\n", r.Setup.Steady.Round(time.Second))
		fmt.Fprintln(w, "| workload | phase | clients | req/s | p50 ms | p99 ms | non-200 | server CPU-ms/req | load avg | probes |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Fprintln(w, "| workload | clients | req/s | p50 ms | p99 ms | non-200 | server CPU-ms/req | load avg |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	}
	for _, x := range r.Runs {
		var codes []string
		for k, v := range x.Statuses {
			if k != "200" {
				codes = append(codes, fmt.Sprintf("%s×%d", k, v))
			}
		}
		slices.Sort(codes)
		non := strconv.Itoa(x.NonOK)
		if len(codes) > 0 {
			non += " (" + strings.Join(codes, ", ") + ")"
		}
		if r.Defaults {
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.1f | %.1f | %s | %.2f | %.1f → %.1f | %.0f |\n", x.Workload, x.Phase, x.Clients, x.PerSecond,
				x.P50ms, x.P99ms, non, x.CPUmsPerReq, x.LoadAvgStart, x.LoadAvgEnd, x.Probes)
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.1f | %.1f | %s | %.2f | %.1f → %.1f |\n", x.Workload, x.Clients, x.PerSecond,
			x.P50ms, x.P99ms, non, x.CPUmsPerReq, x.LoadAvgStart, x.LoadAvgEnd)
	}
	fmt.Fprintf(w, "\nserver RSS after the runs: %d MiB; liveness probes: %.0f\n", r.RSSBytes>>20, r.Probes)
	if r.Reindex > 0 {
		fmt.Fprintf(w, "index rebuild: %.1f s wall, %.1f CPU-s\n", r.Reindex, r.ReindexCPU)
	}
	return nil
}

func machine() string {
	cpus := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		cpus = strings.Count(string(b), "\nprocessor") + 1
	}
	return fmt.Sprintf("%d CPUs", cpus)
}
