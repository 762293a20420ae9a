package registry

import (
	"context"
	"io/fs"
	"time"

	"gorm.io/gorm"
)

// Test hooks: the external test package reaches the store's internals only
// through these.

// WriteDB is the write handle (SQLite: the single writer connection).
func (s *Store) WriteDB() *gorm.DB { return s.db }

// MigrateFS applies the migrations of fsys.
func (s *Store) MigrateFS(ctx context.Context, fsys fs.FS) error { return s.migrateFS(ctx, fsys) }

// EmbeddedMigrations is the store's own migration set.
func (s *Store) EmbeddedMigrations() fs.FS { return s.migrations() }

// Models are the gorm models, for the schema check.
var Models = []any{&agentRow{}, &versionRow{}, &fetchRow{}, &tokenRow{}, &auditRow{}, &changeRow{}, &agentGroupRow{}, &hostClaimRow{}, &catalogRow{},
	&probeRow{}, &probeIfaceRow{}, &probeDayRow{}, &sessionRow{}, &viewRow{}, &autoApprovalRow{}, &signInRow{}}

// ReadDB is the read handle (SQLite: the read-only pool).
func (s *Store) ReadDB() *gorm.DB { return s.rdb }

// SetPlannerStatsEvery sets how often writes start a PRAGMA optimize.
func (s *Store) SetPlannerStatsEvery(d time.Duration) {
	s.stats.mu.Lock()
	s.stats.every = d
	s.stats.mu.Unlock()
}

// WaitPlannerStats waits for a background PRAGMA optimize to finish.
func (s *Store) WaitPlannerStats() { s.stats.wg.Wait() }

// SetRenderViewsBatch sets how many versions a RenderViews batch renders
// and returns the function that restores it.
func SetRenderViewsBatch(n int) (restore func()) {
	old := renderViewsBatch
	renderViewsBatch = n
	return func() { renderViewsBatch = old }
}

// ProbeHostLoadSQL is the probe claim's per-host lease count, for its
// plan check.
const ProbeHostLoadSQL = probeHostLoadSQL

// ProbeCountsSQL is CountProbes' query, for its plan check.
const ProbeCountsSQL = probeCountsSQL

// hold makes g's calls queue without running until release is called,
// so a test can line up the calls one shared transaction takes.
func hold[W any](g *groupCommit[W], st *Store) (release func()) {
	g.mu.Lock()
	g.running = true
	g.mu.Unlock()
	return func() { go g.drain(st) }
}

// queued is how many of g's calls wait for a transaction.
func queued[W any](g *groupCommit[W]) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// HoldActs and QueuedActs hold and count Act calls (hold, queued).
func (s *Service) HoldActs() (release func()) { return hold(&s.acts, s.store) }
func (s *Service) QueuedActs() int            { return queued(&s.acts) }

// HoldSubmits and QueuedSubmits hold and count Submit calls.
func (s *Service) HoldSubmits() (release func()) { return hold(&s.submits, s.store) }
func (s *Service) QueuedSubmits() int            { return queued(&s.submits) }
