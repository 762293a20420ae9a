package registry

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"
)

// SQLite chooses indexes from the statistics ANALYZE keeps in sqlite_stat1.
// Without them it takes an equality on an index's leading columns to be
// selective: `status = 'approved' AND visibility = 'public' AND id IN
// (…twenty ids…)` walked the agents_status index over every approved agent
// instead of looking up twenty primary keys, the anonymous list `… ORDER BY
// name, id LIMIT 21` sorted every approved agent instead of reading
// agents_name in order, and the probe claim sorted them all on every tick
// (docs/benchmarks.md "Catalogue scale: writes, planner statistics, idle
// work"). With statistics the planner knows that agents_status holds the
// whole catalogue under one status.
//
// PRAGMA optimize analyzes the tables that were never analyzed or whose size
// changed a lot since (0x10000: check every table, not only those this
// connection used; 0x2: run ANALYZE). The analysis is complete, not sampled
// (no 0x10): a sampled one read only the first rows of agents_status, all
// one status, and estimated 2,001 agents per status in a catalogue of
// 100,000 approved ones, which misleads the planner as much as no
// statistics. It takes about 0.25 s at 100,000 agents. It is run on the
// writer when the store opens and, while the store is written to, checked at
// most once per plannerStatsEvery in the background, so a catalogue that
// grows from empty to 100,000 agents in one server's life gets statistics as
// it grows. An idle store does nothing. PostgreSQL keeps its own statistics
// (autovacuum).
const (
	optimizeSQL     = "PRAGMA optimize=0x10002"
	optimizeListSQL = "PRAGMA optimize=0x10003" // 0x1: list what would run, run nothing
)

// plannerStatsEvery is how often a written SQLite store checks whether its
// statistics are stale; the check itself costs well under a millisecond.
const plannerStatsEvery = time.Minute

// plannerStats schedules PRAGMA optimize runs (SQLite only).
type plannerStats struct {
	mu      sync.Mutex
	every   time.Duration
	last    time.Time
	running bool
	closed  bool
	wg      sync.WaitGroup
}

// optimize brings the planner statistics up to date now (SQLite; a no-op
// on PostgreSQL). SQLite loads statistics with the schema, and ANALYZE
// does not change the schema version other connections check before each
// statement, so the read pool would keep planning with the old ones; when
// anything was analyzed, an empty schema change (a table created and
// dropped in one transaction) makes every connection reload them.
func (s *Store) optimize(ctx context.Context) error {
	if s.dialect != DialectSQLite {
		return nil
	}
	db := s.db.WithContext(ctx)
	var stale []string
	if err := db.Raw(optimizeListSQL).Scan(&stale).Error; err != nil {
		return translate(err)
	}
	if len(stale) == 0 {
		return nil
	}
	if err := db.Exec(optimizeSQL).Error; err != nil {
		return translate(err)
	}
	return translate(db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("CREATE TABLE cardex_planner_reload (x INTEGER)").Error; err != nil {
			return err
		}
		return tx.Exec("DROP TABLE cardex_planner_reload").Error
	}))
}

// afterWrite starts a background optimize when the last one is older than
// the interval and none is running. It is called after every committed
// write transaction and never blocks it.
func (s *Store) afterWrite() {
	if s.dialect != DialectSQLite {
		return
	}
	st := &s.stats
	now := time.Now()
	st.mu.Lock()
	if st.closed || st.running || now.Sub(st.last) < st.every {
		st.mu.Unlock()
		return
	}
	st.running = true
	st.last = now
	st.wg.Add(1)
	st.mu.Unlock()
	go func() {
		defer st.wg.Done()
		if err := s.optimize(context.Background()); err != nil {
			s.log.Warn("updating SQLite planner statistics", "err", err.Error())
		}
		st.mu.Lock()
		st.running = false
		st.mu.Unlock()
	}()
}

// stopStats waits for a running optimize and starts no more (Close).
func (s *Store) stopStats() {
	s.stats.mu.Lock()
	s.stats.closed = true
	s.stats.mu.Unlock()
	s.stats.wg.Wait()
}
