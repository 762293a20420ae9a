package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/search/corpus"
)

// Approval throughput over real loopback HTTP (docs/benchmarks.md
// "Approval throughput"): a catalogue of CARDEX_BENCH_AGENTS agents
// (default 2,000, so CI can smoke it with -benchtime 1x), each submitted
// and crawled once and pending review, served by the API with the default
// rate limits; then
//
//   - one-by-one: 32 clients, each POST /api/v1/agents/{id}/approve
//     {"versionSeq": 1} of the next pending agent, one approval per
//     iteration;
//   - bulk: one client, POST /api/v1/agents/bulk approving 1,000 agents
//     per iteration.
//
// Each reports approvals/s and the process's CPU (server and clients) per
// approval. Every iteration takes agents nobody approved yet: keep
// -benchtime below the catalogue (N one-by-one + 1,000·N bulk).
//
//	CARDEX_BENCH_AGENTS=20000 go test -run '^$' -bench ApproveHTTP -benchtime 3000x ./api/
func BenchmarkApproveHTTP(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("CARDEX_BENCH_AGENTS")); err == nil && v > 0 {
		n = v
	}
	stores := []struct {
		name string
		open func(testing.TB) *registry.Store
	}{{"sqlite", registrytest.SQLite}}
	if os.Getenv(registrytest.EnvDatabaseURL) != "" {
		stores = append(stores, struct {
			name string
			open func(testing.TB) *registry.Store
		}{"postgres", registrytest.Postgres})
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			store := st.open(b)
			svc := registry.NewService(store, registry.ServiceConfig{})
			ids := seedPending(b, svc, n)
			h, err := New(Config{Service: svc, Ready: store, Limits: ratelimit.DefaultLimits()})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			b.Cleanup(srv.Close)
			admin, _, err := svc.CreateToken(context.Background(), registry.TokenRequest{Role: registry.RoleAdmin})
			if err != nil {
				b.Fatal(err)
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			var next atomic.Int64 // index into ids of the next agent to approve
			take := func(b *testing.B, k int) []string {
				end := int(next.Add(int64(k)))
				if end > len(ids) {
					b.Fatalf("catalogue of %d agents exhausted: lower -benchtime or raise CARDEX_BENCH_AGENTS", len(ids))
				}
				return ids[end-k : end]
			}
			b.Run("one-by-one", func(b *testing.B) {
				b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
				cpu0, start := costCPU(), time.Now()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						id := take(b, 1)[0]
						approvePost(b, client, srv.URL+"/api/v1/agents/"+id+"/approve", admin, `{"versionSeq":1}`)
					}
				})
				reportApprovals(b, b.N, start, cpu0)
			})
			b.Run("bulk-1000", func(b *testing.B) {
				cpu0, start := costCPU(), time.Now()
				total := 0
				for b.Loop() {
					items := make([]bulkItem, 0, registry.MaxBulk)
					one := int64(1)
					for _, id := range take(b, registry.MaxBulk) {
						items = append(items, bulkItem{ID: id, VersionSeq: &one})
					}
					body, _ := json.Marshal(bulkRequest{Action: "approve", Items: items})
					approvePost(b, client, srv.URL+"/api/v1/agents/bulk", admin, string(body))
					total += len(items)
				}
				reportApprovals(b, total, start, cpu0)
			})
		})
	}
}

func reportApprovals(b *testing.B, n int, start time.Time, cpu0 time.Duration) {
	if n == 0 {
		return
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "approvals/s")
	b.ReportMetric(float64((costCPU()-cpu0).Microseconds())/1000/float64(n), "cpu-ms/approval")
}

func approvePost(b *testing.B, client *http.Client, url, token, body string) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"ok":false`)) {
		b.Errorf("%s: status %d: %.300s", url, res.StatusCode, out)
	}
}

// seedPending submits n agents (8 at a time) and records one fetch of a
// corpus card for each, in batches of 64 as the crawler does, leaving them
// pending review at version 1; it returns their ids.
func seedPending(b *testing.B, svc *registry.Service, n int) []string {
	b.Helper()
	ctx := context.Background()
	g := corpus.New(42)
	var raws [][]byte
	var cards []*agentcard.Card
	for i := range 100 {
		raw, err := json.Marshal(g.Agent(i).Card.A2A())
		if err != nil {
			b.Fatal(err)
		}
		p, err := agentcard.Parse(raw, agentcard.Options{})
		if err != nil {
			b.Fatal(err)
		}
		raws, cards = append(raws, raw), append(cards, p.Card)
	}
	ids := make([]string, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				a, err := svc.Submit(ctx, registry.Principal{Role: registry.RoleAdmin, Name: "seed"},
					fmt.Sprintf("https://h%d.example.com/agents/%d/card.json", i%500, i), registry.VisibilityPublic)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = a.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	k := 0
	for {
		due, err := svc.ClaimDue(ctx, "seed", now.Add(time.Minute), time.Hour, 512, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			return ids
		}
		for start := 0; start < len(due); start += 64 {
			var fs []registry.AgentFetch
			for _, d := range due[start:min(start+64, len(due))] {
				k++
				fs = append(fs, registry.AgentFetch{AgentID: d.ID, Result: registry.FetchResult{
					Attempt: registry.FetchAttempt{At: now, URL: d.CardURL, HTTPStatus: 200},
					Raw:     raws[k%len(raws)], Card: cards[k%len(cards)], Trust: registry.TrustUnsigned,
					NextFetchAt: now.Add(24 * time.Hour)}})
			}
			rerrs, err := svc.RecordFetches(ctx, "seed", fs)
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range rerrs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
