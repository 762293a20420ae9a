package search

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/corpus"
)

// corpusSource serves generated agents page by page without keeping them
// in memory, so the RSS measured after a rebuild is the index's.
type corpusSource struct {
	gen *corpus.Generator
	n   int
	// queries: every third agent also has catalog representativeQueries,
	// made of its skills' words.
	queries bool
}

func (c corpusSource) agent(i int) registry.Agent {
	a := c.gen.Agent(i)
	if c.queries && i%3 == 0 && a.Card != nil {
		for _, s := range a.Card.Skills {
			a.CatalogQueries = append(a.CatalogQueries, "how do I "+strings.ToLower(s.Name)+"?", "I need "+s.Description)
		}
	}
	return a
}

func (c corpusSource) Changes(_ context.Context, after int64, _ int) ([]registry.Change, int64, error) {
	return nil, after, nil
}
func (c corpusSource) LatestSeq(context.Context) (int64, error) { return int64(c.n), nil }
func (c corpusSource) Agents(_ context.Context, ids []string) ([]registry.Agent, error) {
	var out []registry.Agent
	for _, id := range ids {
		i, err := strconv.Atoi(strings.TrimPrefix(id, "agent-"))
		if err == nil && i < c.n {
			out = append(out, c.agent(i))
		}
	}
	return out, nil
}
func (c corpusSource) ListAgents(_ context.Context, afterID string, limit int) ([]registry.Agent, error) {
	start := 0
	if afterID != "" {
		i, err := strconv.Atoi(strings.TrimPrefix(afterID, "agent-"))
		if err != nil {
			return nil, err
		}
		start = i + 1
	}
	var out []registry.Agent
	for i := start; i < c.n && len(out) < limit; i++ {
		out = append(out, c.agent(i))
	}
	return out, nil
}

func benchAgents() int {
	if n, err := strconv.Atoi(os.Getenv("CARDEX_BENCH_AGENTS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// BenchmarkRebuild100k builds the whole index from the generated corpus
// (CARDEX_BENCH_AGENTS overrides the size) and reports the index size on
// disk and the process RSS after the build.
func BenchmarkRebuild100k(b *testing.B) {
	n := benchAgents()
	src := corpusSource{gen: corpus.New(42), n: n}
	for b.Loop() {
		dir := b.TempDir()
		x, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime()
		if err := x.Rebuild(context.Background(), src); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/rebuild")
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s/rebuild")
		b.ReportMetric(float64(dirSize(dir))/(1<<20), "MiB-on-disk")
		runtime.GC()
		debug.FreeOSMemory()
		rss, anon := rssBytes()
		b.ReportMetric(float64(rss)/(1<<20), "MiB-RSS")
		b.ReportMetric(float64(anon)/(1<<20), "MiB-RSS-anon")
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchQueries are 1–3-word queries drawn from the corpus vocabulary.
var benchQueries = []string{
	"invoice", "payment reconciliation", "flight booking", "hotel", "code review",
	"sql dashboard", "customer ticket", "patient appointment", "contract clause",
	"video transcript", "resume interview", "lead crm", "incident alert",
	"recipe", "audit expense report", "deploy kubernetes", "forecast revenue",
	"translate subtitle", "fraud score", "data pipeline etl",
}

// BenchmarkSearch100k runs 1–3-word queries with two filters and every
// facet against a 100k-agent index, and reports p50/p99 latency. "cold"
// runs with the cache off, so every query computes its page and facets;
// "cached" repeats the same 60 query/filter combinations with the cache on
// (popular queries and later pages).
//
// "unique" is the load command's workload (cardex-bench search): an
// anonymous caller, no filters, every query 1–3 words of one corpus
// skill's name and description, none repeated. "typos" is the same with
// two neighbouring letters swapped in every word of five letters or more:
// most find nothing as written and run again allowing typos.
func BenchmarkSearch100k(b *testing.B) {
	b.Run("cold", func(b *testing.B) { benchSearch(b, Options{CacheEntries: -1}, benchQuery) })
	b.Run("cached", func(b *testing.B) { benchSearch(b, Options{}, benchQuery) })
	b.Run("unique", func(b *testing.B) { benchSearch(b, Options{}, uniqueQueries(benchAgents())) })
	b.Run("typos", func(b *testing.B) { benchSearch(b, Options{}, typoQueries(uniqueQueries(benchAgents()))) })
}

// typoQueries are next's queries with the middle two letters of each word
// of five or more swapped.
func typoQueries(next func(int) Query) func(int) Query {
	return func(i int) Query {
		q := next(i)
		ws := strings.Fields(q.Q)
		for j, w := range ws {
			if len(w) >= 5 {
				m := len(w) / 2
				ws[j] = w[:m-1] + w[m:m+1] + w[m-1:m] + w[m+1:]
			}
		}
		q.Q = strings.Join(ws, " ")
		return q
	}
}

// uniqueQueries returns the i-th of a sequence of distinct 1–3-word
// queries drawn from corpus skills.
func uniqueQueries(agents int) func(int) Query {
	gen := corpus.New(42)
	r := rand.New(rand.NewPCG(42, 1))
	var skills [][]string
	for i := range min(agents, 5000) {
		a := gen.Agent(i * max(1, agents/5000))
		if a.Card == nil {
			continue
		}
		for _, s := range a.Card.Skills {
			var ws []string
			for _, w := range strings.FieldsFunc(strings.ToLower(s.Name+" "+s.Description), func(r rune) bool { return !unicode.IsLetter(r) }) {
				if len(w) >= 3 && !slices.Contains(ws, w) {
					ws = append(ws, w)
				}
			}
			if len(ws) > 0 {
				skills = append(skills, ws)
			}
		}
	}
	seen := map[string]bool{}
	return func(int) Query {
		for {
			ws := skills[r.IntN(len(skills))]
			n := min(len(ws), 1+r.IntN(3))
			var pick []string
			for _, i := range r.Perm(len(ws))[:n] {
				pick = append(pick, ws[i])
			}
			q := strings.Join(pick, " ")
			if !seen[q] {
				seen[q] = true
				return Query{Q: q, PageSize: 20}
			}
		}
	}
}

// openBench opens the benchmark index. CARDEX_BENCH_DIR keeps the built
// index between runs; it is rebuilt only when missing or of another
// mapping.
func openBench(b *testing.B, opts Options) *Index {
	dir := os.Getenv("CARDEX_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	// A generous timeout: the benchmark measures the latency distribution
	// instead of cutting its tail.
	opts.QueryTimeout = time.Minute
	x, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = x.Close() })
	if need, _ := x.NeedsRebuild(); need {
		if err := x.Rebuild(context.Background(), corpusSource{gen: corpus.New(42), n: benchAgents()}); err != nil {
			b.Fatal(err)
		}
	}
	return x
}

var benchFilters = []Filters{
	{Bindings: []string{"JSONRPC"}, Capabilities: []string{CapabilityStreaming}},
	{InputModes: []string{"text/plain"}, Trust: []string{"unsigned", "verified"}},
	{SecuritySchemes: []string{"oauth2"}, ProtocolVersions: []string{"1.0", "0.3"}},
}

// benchQuery is the i-th query of the benchmark workload.
func benchQuery(i int) Query {
	return Query{Q: benchQueries[i%len(benchQueries)], Filters: benchFilters[i%len(benchFilters)]}
}

func benchSearch(b *testing.B, opts Options, query func(int) Query) {
	x := openBench(b, opts)
	var lat []time.Duration
	ctx := context.Background()
	i := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		q := query(i)
		i++
		start := time.Now()
		r, err := x.Search(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if r.TotalSize == 0 && opts.CacheEntries < 0 {
			b.Fatalf("%q: no results", q.Q)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
	reportRSS(b)
}

// reportRSS reports the process RSS while serving: total (mmapped
// segments included) and anonymous (heap, facet tables, cache).
func reportRSS(b *testing.B) {
	runtime.GC()
	rss, anon := rssBytes()
	b.ReportMetric(float64(rss)/(1<<20), "MiB-RSS")
	b.ReportMetric(float64(anon)/(1<<20), "MiB-RSS-anon")
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// rssBytes reads the resident set size and its anonymous part (heap, not
// the mmapped index segments the kernel can drop) from /proc; 0 where
// unavailable.
func rssBytes() (total, anon int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	read := func(rest string) int64 {
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		return kb * 1024
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			total = read(rest)
		}
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			anon = read(rest)
		}
	}
	return total, anon
}

// cpuTime is the user plus system CPU time of the process: on a shared
// machine it says what the work cost, whatever else was running.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
