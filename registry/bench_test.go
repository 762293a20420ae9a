package registry_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// benchStores runs f on SQLite and, when configured, PostgreSQL.
func benchStores(b *testing.B, f func(b *testing.B, s *registry.Store)) {
	b.Run("sqlite", func(b *testing.B) { f(b, registrytest.SQLite(b)) })
	if os.Getenv(registrytest.EnvDatabaseURL) != "" {
		b.Run("postgres", func(b *testing.B) { f(b, registrytest.Postgres(b)) })
	}
}

// seedFetched makes n agents with one stored version each.
func seedFetched(b *testing.B, svc *registry.Service, c *clock, n int, card *agentcard.Card, raw []byte) {
	for i := range n {
		if _, err := svc.Submit(b.Context(), anonymous, fmt.Sprintf("https://b%d.example.com/", i), ""); err != nil {
			b.Fatal(err)
		}
	}
	for {
		due, err := svc.ClaimDue(b.Context(), "seed", c.Now(), time.Minute, 500, 2)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			return
		}
		for _, d := range due {
			res := registry.FetchResult{Attempt: registry.FetchAttempt{At: c.Now(), URL: d.CardURL, HTTPStatus: 200},
				Raw: raw, Card: card, Trust: registry.TrustUnsigned, NextFetchAt: c.Now().Add(time.Hour)}
			if err := svc.RecordFetch(b.Context(), "seed", d.ID, res); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// crawlRound claims every due agent in batches of 100 and records what
// result() says for each, one RecordFetch per result (batch 1) or
// RecordFetches of up to batch results (the scheduler's default is 64); it
// returns how many were recorded.
func crawlRound(b *testing.B, svc *registry.Service, c *clock, batch int, result func(d registry.DueAgent) registry.FetchResult) int {
	n := 0
	for {
		due, err := svc.ClaimDue(b.Context(), "bench", c.Now(), time.Minute, 100, 2)
		if err != nil {
			b.Fatal(err)
		}
		if len(due) == 0 {
			return n
		}
		for start := 0; start < len(due); start += batch {
			var fs []registry.AgentFetch
			for _, d := range due[start:min(start+batch, len(due))] {
				fs = append(fs, registry.AgentFetch{AgentID: d.ID, Result: result(d)})
			}
			errs, err := svc.RecordFetches(b.Context(), "bench", fs)
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			n += len(fs)
		}
	}
}

// recordBatches are the batch sizes the store benchmarks compare.
var recordBatches = []int{1, 64}

// BenchmarkRecrawlNotModified is the store side of the 304 re-crawl path
// (docs/design.md target: ≥ 3,000 cards/s end to end): claim in batches of 100,
// record a 304 for each.
func BenchmarkRecrawlNotModified(b *testing.B) {
	benchStores(b, func(b *testing.B, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		raw := cardJSON("Bench", "1")
		p, _ := agentcard.Parse(raw, agentcard.Options{})
		seedFetched(b, svc, c, 1000, p.Card, raw)
		for _, batch := range recordBatches {
			b.Run(fmt.Sprintf("batch-%d", batch), func(b *testing.B) {
				total := 0
				start := time.Now()
				for b.Loop() {
					c.Advance(2 * time.Hour)
					total += crawlRound(b, svc, c, batch, func(d registry.DueAgent) registry.FetchResult {
						return registry.FetchResult{Attempt: registry.FetchAttempt{At: c.Now(), URL: d.CardURL, HTTPStatus: 304},
							NotModified: true, NextFetchAt: c.Now().Add(time.Hour)}
					})
				}
				b.ReportMetric(float64(total)/time.Since(start).Seconds(), "cards/s")
			})
		}
	})
}

// BenchmarkRecordNewVersion is the store side of crawling changed cards
// (docs/design.md target: ≥ 1,000 new cards/s end to end): every fetch stores a
// new version with its diff.
func BenchmarkRecordNewVersion(b *testing.B) {
	benchStores(b, func(b *testing.B, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		raw := cardJSON("Bench", "0")
		p, _ := agentcard.Parse(raw, agentcard.Options{})
		seedFetched(b, svc, c, 200, p.Card, raw)
		round := 0
		for _, batch := range recordBatches {
			b.Run(fmt.Sprintf("batch-%d", batch), func(b *testing.B) {
				total := 0
				start := time.Now()
				for b.Loop() {
					round++
					c.Advance(2 * time.Hour)
					raw := cardJSON("Bench", fmt.Sprint(round))
					np, _ := agentcard.Parse(raw, agentcard.Options{})
					total += crawlRound(b, svc, c, batch, func(d registry.DueAgent) registry.FetchResult {
						return registry.FetchResult{Attempt: registry.FetchAttempt{At: c.Now(), URL: d.CardURL, HTTPStatus: 200},
							Raw: raw, Card: np.Card, Trust: registry.TrustUnsigned, NextFetchAt: c.Now().Add(time.Hour)}
					})
				}
				b.ReportMetric(float64(total)/time.Since(start).Seconds(), "cards/s")
			})
		}
	})
}

func BenchmarkSubmit(b *testing.B) {
	benchStores(b, func(b *testing.B, s *registry.Store) {
		svc := newService(s, newClock())
		i := 0
		for b.Loop() {
			i++
			if _, err := svc.Submit(b.Context(), anonymous, fmt.Sprintf("https://s%d.example.com/", i), ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkListPage(b *testing.B) {
	benchStores(b, func(b *testing.B, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		raw := cardJSON("Bench", "1")
		p, _ := agentcard.Parse(raw, agentcard.Options{})
		seedFetched(b, svc, c, 1000, p.Card, raw)
		for b.Loop() {
			page, err := svc.List(b.Context(), admin, registry.ListQuery{PageSize: 100})
			if err != nil || len(page.Agents) != 100 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkApprove approves fetched pending agents one by one (Act) and a
// thousand at a time (ActMany, POST /api/v1/agents/bulk) in the store alone;
// it reports approvals per second (docs/benchmarks.md "Curation in bulk").
func BenchmarkApprove(b *testing.B) {
	const n = 1000
	raw := cardJSON("Bench", "1")
	p, _ := agentcard.Parse(raw, agentcard.Options{})
	card := p.Card
	for _, mode := range []string{"one-by-one", "bulk"} {
		b.Run(mode, func(b *testing.B) {
			benchStores(b, func(b *testing.B, s *registry.Store) {
				c := newClock()
				svc := newService(s, c)
				seedFetched(b, svc, c, n, card, raw)
				var items []registry.BulkItem
				q := registry.ListQuery{PageSize: 100, Status: []registry.Status{registry.StatusPending}}
				for {
					page, err := svc.List(b.Context(), admin, q)
					if err != nil {
						b.Fatal(err)
					}
					for _, a := range page.Agents {
						items = append(items, registry.BulkItem{ID: a.ID, VersionSeq: seq(a.VersionSeq)})
					}
					if q.PageToken = page.NextPageToken; q.PageToken == "" {
						break
					}
				}
				if len(items) != n {
					b.Fatalf("%d pending agents", len(items))
				}
				start := time.Now()
				if mode == "bulk" {
					res, err := svc.ActMany(b.Context(), admin, registry.ActionApprove, items, "bench")
					if err != nil || res[n-1].Status != registry.StatusApproved {
						b.Fatalf("bulk: %v", err)
					}
				} else {
					for _, it := range items {
						if _, err := svc.Act(b.Context(), admin, it.ID, registry.ActionApprove, registry.ActionRequest{VersionSeq: it.VersionSeq}); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "approvals/s")
			})
		})
	}
}

// BenchmarkListPageGroups lists a page of 100 of 1,000 approved agents, half
// of them for the group "payments", as readers holding no group, that one
// group, and 200 groups of which it is the last (a person in many groups
// of an identity provider): the cost of the groups term of the listing
// rule in SQL (docs/benchmarks.md "Agents for groups").
func BenchmarkListPageGroups(b *testing.B) {
	benchStores(b, func(b *testing.B, s *registry.Store) {
		c := newClock()
		svc := newService(s, c)
		raw := cardJSON("Bench", "1")
		p, _ := agentcard.Parse(raw, agentcard.Options{})
		seedFetched(b, svc, c, 1000, p.Card, raw)
		if err := s.WriteDB().Exec("UPDATE agents SET status = 'approved'").Error; err != nil {
			b.Fatal(err)
		}
		if err := s.WriteDB().Exec("UPDATE agents SET visibility = 'groups', visible_groups = ? WHERE id IN (SELECT id FROM agents ORDER BY id LIMIT 500)", "\npayments\n").Error; err != nil {
			b.Fatal(err)
		}
		if err := s.WriteDB().Exec("INSERT INTO agent_groups (name, agent_id) SELECT 'payments', id FROM agents WHERE visibility = 'groups'").Error; err != nil {
			b.Fatal(err)
		}
		many := make([]string, 0, 200)
		for i := range 199 {
			many = append(many, fmt.Sprint("team-", i))
		}
		many = append(many, "payments")
		for _, c := range []struct {
			name   string
			groups []string
			total  int
		}{{"none", nil, 500}, {"one", []string{"payments"}, 1000}, {"200", many, 1000}} {
			b.Run(c.name, func(b *testing.B) {
				p := registry.Principal{Role: registry.RoleReader, Groups: c.groups}
				for b.Loop() {
					page, err := svc.List(b.Context(), p, registry.ListQuery{PageSize: 100})
					if err != nil || len(page.Agents) != 100 || page.TotalSize != c.total {
						b.Fatal(err, page.TotalSize)
					}
				}
			})
		}
	})
}
