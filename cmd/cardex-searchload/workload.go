package main

import (
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
	Workload     string         `json:"workload"`
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
}

// runLoad sends GET /api/v1/agents?q=…&pageSize=20 from clients goroutines
// for d, each taking its next query from next.
func runLoad(ctx context.Context, s *server, workload string, clients int, d time.Duration, next func() string) (result, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	res := result{Workload: workload, Clients: clients, Statuses: map[string]int{}, LoadAvgStart: loadAvg()}
	cpu0, _, err := procStat(s.cmd.Process.Pid)
	if err != nil {
		return res, err
	}
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
				u := s.base + "/api/v1/agents?pageSize=20&q=" + url.QueryEscape(next())
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
	cpu1, _, err := procStat(s.cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	res.LoadAvgEnd = loadAvg()
	res.Requests = len(lat)
	res.PerSecond = float64(len(lat)) / elapsed.Seconds()
	res.NonOK = len(lat) - res.Statuses["200"]
	if len(lat) > 0 {
		slices.Sort(lat)
		res.P50ms = ms(lat[(len(lat)*50+99)/100-1])
		res.P99ms = ms(lat[(len(lat)*99+99)/100-1])
		res.CPUmsPerReq = ms(cpu1-cpu0) / float64(len(lat))
	}
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// setupTimes are the durations of the preparation steps.
type setupTimes struct {
	Submit       time.Duration `json:"submit"`
	CrawlApprove time.Duration `json:"crawlAndApprove"`
	Index        time.Duration `json:"indexCatchUp"`
}

// report is the whole measurement.
type report struct {
	Agents     int        `json:"agents"`
	Setup      setupTimes `json:"setup"`
	Runs       []result   `json:"runs"`
	RSSBytes   int64      `json:"serverRssAfterRuns"`
	Reindex    float64    `json:"reindexSeconds,omitempty"`
	ReindexCPU float64    `json:"reindexCpuSeconds,omitempty"`
	Started    time.Time  `json:"started"`
	Machine    string     `json:"machine"`
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
		return writeJSON(w, r)
	}
	fmt.Fprintf(w, "%d agents (%s); setup: submit %s, crawl+approve %s, index catch-up %s\n\n", r.Agents, r.Machine,
		r.Setup.Submit.Round(time.Second), r.Setup.CrawlApprove.Round(time.Second), r.Setup.Index.Round(time.Second))
	fmt.Fprintln(w, "| workload | clients | req/s | p50 ms | p99 ms | non-200 | server CPU-ms/req | load avg |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
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
		fmt.Fprintf(w, "| %s | %d | %.0f | %.1f | %.1f | %s | %.2f | %.1f → %.1f |\n", x.Workload, x.Clients, x.PerSecond,
			x.P50ms, x.P99ms, non, x.CPUmsPerReq, x.LoadAvgStart, x.LoadAvgEnd)
	}
	fmt.Fprintf(w, "\nserver RSS after the runs: %d MiB\n", r.RSSBytes>>20)
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
