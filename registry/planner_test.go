package registry_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// rulePageSQL is the listing rule for anonymous callers
// (registry/visibility.go's scope) with a page of ids: the shape search
// hydration had, and any read of a few agents under the rule.
// planCount makes each plan's EXPLAIN text new.
var planCount atomic.Int64

const rulePageSQL = "SELECT * FROM agents WHERE (status = 'approved' AND visibility = 'public' AND health <> 'gone') AND (id IN ? AND status <> 'removed')"

// plan is SQLite's plan for q on a connection of the read pool. EXPLAIN
// QUERY PLAN is planned with the schema the connection holds, which a
// statement that runs brings up to date, as it does for the server's own
// queries: one runs first, in the same transaction. Each EXPLAIN is new
// text: connections keep prepared statements (store.go sqliteStmtCache),
// and a kept statement that runs is compiled again when the schema
// changed, while an EXPLAIN, which reads nothing, would keep its old plan.
func plan(t *testing.T, s *registry.Store, q string, args ...any) string {
	t.Helper()
	q += fmt.Sprintf(" /* plan %d */", planCount.Add(1))
	var rows []struct {
		ID, Parent, Notused int
		Detail              string
	}
	err := s.ReadDB().Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM agents WHERE id = ''").Scan(&n).Error; err != nil {
			return err
		}
		return tx.Raw("EXPLAIN QUERY PLAN "+q, args...).Scan(&rows).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	var d []string
	for _, r := range rows {
		d = append(d, r.Detail)
	}
	return strings.Join(d, "; ")
}

// approvedCatalogue submits, crawls and approves n agents.
func approvedCatalogue(t *testing.T, svc *registry.Service, c *clock, n int) []string {
	t.Helper()
	raw := cardJSON("Planner", "1")
	p, err := agentcard.Parse(raw, agentcard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range n {
		ids[i] = mustSubmit(t, svc, fmt.Sprintf("https://p%d.example.com/", i)).ID
	}
	for {
		due, err := svc.ClaimDue(t.Context(), "seed", c.Now(), time.Minute, 256, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) == 0 {
			break
		}
		var fs []registry.AgentFetch
		for _, d := range due {
			fs = append(fs, registry.AgentFetch{AgentID: d.ID, Result: registry.FetchResult{
				Attempt: registry.FetchAttempt{At: c.Now(), URL: d.CardURL, HTTPStatus: 200},
				Raw:     raw, Card: p.Card, Trust: registry.TrustUnsigned, NextFetchAt: c.Now().Add(time.Hour)}})
		}
		if _, err := svc.RecordFetches(t.Context(), "seed", fs); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		setStatus(t, svc, id, registry.StatusApproved)
	}
	return ids
}

// TestPlannerStatistics: a SQLite store keeps planner statistics as its
// catalogue grows, so a page of ids under the listing rule is looked up by
// primary key instead of walking the agents_status index over every
// approved agent (planner.go). Statistics are SQLite's own; PostgreSQL's
// autovacuum keeps them there, so this runs on SQLite only.
func TestPlannerStatistics(t *testing.T) {
	dir := t.TempDir()
	s, err := registry.Open(context.Background(), registry.OpenOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s.SetPlannerStatsEvery(time.Hour) // the open-time run saw an empty catalogue
	c := newClock()
	svc := newService(s, c)
	ids := approvedCatalogue(t, svc, c, 300)
	page := ids[100:120]

	const byStatus, byID = "USING INDEX agents_status", "USING INDEX sqlite_autoindex_agents_1 (id=?)"
	if p := plan(t, s, rulePageSQL, page); !strings.Contains(p, byStatus) {
		t.Fatalf("before statistics: plan %q, want the agents_status walk this test guards against", p)
	}

	// A write after the interval brings the statistics up to date in the
	// background; readers plan with them from then on.
	s.SetPlannerStatsEvery(0)
	mustSubmit(t, svc, "https://after.example.com/")
	s.WaitPlannerStats()
	if p := plan(t, s, rulePageSQL, page); !strings.Contains(p, byID) || strings.Contains(p, byStatus) {
		t.Fatalf("after a write: plan %q, want primary-key lookups (%s)", p, byID)
	}
	var n int64
	if err := s.ReadDB().Raw("SELECT COUNT(*) FROM sqlite_stat1 WHERE idx = 'agents_status'").Scan(&n).Error; err != nil || n != 1 {
		t.Fatalf("sqlite_stat1 rows for agents_status: %d, %v", n, err)
	}

	// A database without statistics (written by an earlier version) gets
	// them when it is opened.
	if err := s.WriteDB().Exec("DROP TABLE sqlite_stat1").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := registrytest.SQLiteAt(t, dir)
	if p := plan(t, s2, rulePageSQL, page); !strings.Contains(p, byID) || strings.Contains(p, byStatus) {
		t.Fatalf("after reopening: plan %q, want primary-key lookups", p)
	}
	// And the search hydration answers exactly the page, in order.
	got, err := newService(s2, c).Listed(t.Context(), anonymous, page)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(page) {
		t.Fatalf("Listed: %d agents, want %d", len(got), len(page))
	}
	for i, a := range got {
		if a.ID != page[i] {
			t.Fatalf("Listed[%d] = %s, want %s", i, a.ID, page[i])
		}
	}
}
