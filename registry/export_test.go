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

// HoldActs makes Act calls queue without running until release is called,
// so a test can line up the calls one shared transaction takes.
func (s *Service) HoldActs() (release func()) {
	s.acts.mu.Lock()
	s.acts.running = true
	s.acts.mu.Unlock()
	return func() { go s.acts.drain(s.store) }
}

// QueuedActs is how many Act calls wait for a transaction.
func (s *Service) QueuedActs() int {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	return len(s.acts.queue)
}
