package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search"
	"github.com/cardexhq/cardex/search/corpus"
)

// The per-request cost of GET /api/v1/agents?q=…&pageSize=20 outside the
// index query (docs/benchmarks.md "Search request cost"): the echo handler
// with the server's middleware, called in process (no sockets), over a
// real SQLite file and a real index holding generated corpus agents, each
// submitted, fetched and approved through registry.Service.
//
// CARDEX_BENCH_AGENTS sets the catalogue size (default 500, so CI can smoke
// it with -benchtime 1x); CARDEX_BENCH_DIR keeps the SQLite file and the
// index between runs (a 100k catalogue takes minutes to build).

func costBenchAgents() int {
	if n, err := strconv.Atoi(os.Getenv("CARDEX_BENCH_AGENTS")); err == nil && n > 0 {
		return n
	}
	return 500
}

// costCatalogue is the SQLite store and index the benchmark serves.
type costCatalogue struct {
	svc     *registry.Service
	store   *registry.Store
	idx     *search.Index
	queries []string // 1–3 words of the corpus's skill text, distinct
}

// openCostCatalogue builds (or reopens, under CARDEX_BENCH_DIR) the
// catalogue of n corpus agents.
func openCostCatalogue(b *testing.B, n int) *costCatalogue {
	b.Helper()
	dir := os.Getenv("CARDEX_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		dir = filepath.Join(dir, fmt.Sprintf("api-cost-%d", n))
	}
	store := registrytest.SQLiteAt(b, filepath.Join(dir, "db"))
	svc := registry.NewService(store, registry.ServiceConfig{})
	ctx := context.Background()
	done := filepath.Join(dir, "seeded")
	if _, err := os.Stat(done); err != nil {
		seedCorpus(b, svc, n)
		if err := os.WriteFile(done, []byte("ok\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	idx, err := search.Open(filepath.Join(dir, "index"), search.Options{QueryTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = idx.Close() })
	if need, _ := idx.NeedsRebuild(); need {
		if err := idx.Rebuild(ctx, svc.IndexSource()); err != nil {
			b.Fatal(err)
		}
	}
	return &costCatalogue{svc: svc, store: store, idx: idx, queries: costQueries(n)}
}

// seedCorpus submits n corpus agents, records each one's card as a fetch
// (in batches, as the crawler does) and approves it.
func seedCorpus(b *testing.B, svc *registry.Service, n int) {
	b.Helper()
	ctx := context.Background()
	g := corpus.New(42)
	raws := map[string][]byte{}
	for i := range n {
		a := g.Agent(i)
		raw, err := json.Marshal(a.Card.A2A())
		if err != nil {
			b.Fatal(err)
		}
		created, err := svc.Submit(ctx, registry.Anonymous, a.CardURL, registry.VisibilityPublic)
		if err != nil {
			b.Fatal(err)
		}
		raws[created.ID] = raw
	}
	admin := registry.Principal{Role: registry.RoleAdmin, Name: "bench"}
	one := int64(1)
	for {
		due, err := svc.ClaimDue(ctx, "bench", time.Now().Add(time.Minute), time.Hour, 500, 500)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			break
		}
		batch := make([]registry.AgentFetch, 0, len(due))
		for _, d := range due {
			raw := raws[d.ID]
			parsed, err := agentcard.Parse(raw, agentcard.Options{CardURL: d.CardURL})
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, registry.AgentFetch{AgentID: d.ID, Result: registry.FetchResult{
				Attempt:    registry.FetchAttempt{At: time.Now(), URL: d.CardURL, HTTPStatus: 200, Bytes: int64(len(raw))},
				FetchedURL: d.CardURL, Raw: raw, Card: parsed.Card, Trust: registry.TrustUnsigned,
				NextFetchAt: time.Now().Add(24 * time.Hour)}})
		}
		errs, err := svc.RecordFetches(ctx, "bench", batch)
		if err != nil {
			b.Fatal(err)
		}
		for i, e := range errs {
			if e != nil {
				b.Fatalf("record %s: %v", batch[i].AgentID, e)
			}
		}
		for _, d := range due {
			if _, err := svc.Act(ctx, admin, d.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: &one}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// costQueries are distinct 1–3-word queries from the skill names and
// descriptions of the corpus agents (each finds at least its own agent).
func costQueries(n int) []string {
	g := corpus.New(42)
	seen := map[string]bool{}
	var out []string
	for i := 0; len(out) < 4096 && i < 4*n; i++ {
		a := g.Agent(i % n)
		s := a.Card.Skills[(i/n)%len(a.Card.Skills)]
		words := strings.Fields(strings.Trim(strings.ToLower(s.Name+" "+s.Description), "."))
		k := 1 + i%3
		start := (i * 7) % max(1, len(words)-k)
		if start+k > len(words) {
			continue
		}
		q := strings.Join(words[start:start+k], " ")
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

// replaySearcher answers each query with the result the real index gave
// it once, so a request through it costs everything but the index query.
type replaySearcher struct {
	Searcher
	mu   sync.Mutex
	byQ  map[string]*search.Result
	miss int
}

func (r *replaySearcher) Search(ctx context.Context, q search.Query) (*search.Result, error) {
	r.mu.Lock()
	res, ok := r.byQ[q.Q]
	r.mu.Unlock()
	if ok {
		return res, nil
	}
	res, err := r.Searcher.Search(ctx, q)
	if err == nil {
		r.mu.Lock()
		r.byQ[q.Q] = res
		r.miss++
		r.mu.Unlock()
	}
	return res, err
}

// costHandler is the API as cmd/cardex serve builds it (text access log at
// info, rate limits on but never reached), over searcher.
func costHandler(b *testing.B, c *costCatalogue, searcher Searcher) http.Handler {
	b.Helper()
	h, _, err := newServer(Config{Service: c.svc, Ready: c.store, Search: searcher,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Limits: ratelimit.Limits{ReadPerAddress: ratelimit.Rate{N: 1 << 30, Per: time.Second, Burst: 1 << 30}}})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// reportHeap reports the live heap after a run.
func reportHeap(b *testing.B) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "MiB-heap-live")
}

func costGet(b *testing.B, h http.Handler, q string) int {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/agents?pageSize=20&q="+url.QueryEscape(q), nil)
	req.RemoteAddr = "127.0.0.1:40000"
	w := &countingWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.code != http.StatusOK {
		b.Fatalf("%q: status %d", q, w.code)
	}
	return w.n
}

// countingWriter is a ResponseWriter that keeps only the status and the
// byte count: the connection's buffered writer costs the server about as
// little, where a recorder's growing buffer would be counted as the
// server's allocations.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *countingWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	return len(b), nil
}

// BenchmarkSearchRequestCost reports CPU-ms (getrusage: the whole process,
// so GC and SQLite are counted), allocations and response bytes per
// request of GET /api/v1/agents?q=…&pageSize=20:
//
//   - cached: the real index with its page cache warm (a repeated query);
//   - after-search: every query answered by replaying the index's result,
//     i.e. only what the request costs outside the index query (middleware,
//     SQL hydration and re-check, JSON);
//   - unique: the real index, every request a query not asked before.
func BenchmarkSearchRequestCost(b *testing.B) {
	c := openCostCatalogue(b, costBenchAgents())
	queries := c.queries
	if len(queries) > 256 {
		queries = queries[:256]
	}
	b.Run("cached", func(b *testing.B) {
		h := costHandler(b, c, c.idx)
		for _, q := range queries {
			costGet(b, h, q)
		}
		runCost(b, func(i int) int { return costGet(b, h, queries[i%len(queries)]) })
		reportHeap(b)
	})
	b.Run("after-search", func(b *testing.B) {
		r := &replaySearcher{Searcher: c.idx, byQ: map[string]*search.Result{}}
		h := costHandler(b, c, r)
		for _, q := range queries {
			costGet(b, h, q)
		}
		runCost(b, func(i int) int { return costGet(b, h, queries[i%len(queries)]) })
		reportHeap(b)
		if r.miss != len(queries) {
			b.Fatalf("%d index queries for %d distinct queries", r.miss, len(queries))
		}
	})
	b.Run("unique", func(b *testing.B) {
		h := costHandler(b, c, c.idx)
		all := c.queries
		next := len(queries) // the first ones were asked by the other runs
		runCost(b, func(int) int {
			// Past the list (thousands of queries) the run would repeat
			// cached ones: keep -benchtime below its length.
			q := all[next%len(all)]
			next++
			return costGet(b, h, q)
		})
		reportHeap(b)
	})
}

func runCost(b *testing.B, do func(i int) int) {
	b.ReportAllocs()
	bytes := 0
	i := 0
	cpu0 := costCPU()
	for b.Loop() {
		bytes += do(i)
		i++
	}
	b.ReportMetric(float64((costCPU()-cpu0).Microseconds())/1000/float64(i), "cpu-ms/op")
	b.ReportMetric(float64(bytes)/float64(i), "resp-B/op")
}

// costCPU is the process's user plus system CPU time.
func costCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
