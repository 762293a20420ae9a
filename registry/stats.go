package registry

import (
	"context"
	"database/sql"
	"time"
)

// CountDue is the crawl backlog: agents the crawler should fetch now
// (due, not removed or rejected, lease free or expired). Cheap enough for a
// metrics scrape: one COUNT over the next_fetch_at index.
func (s *Service) CountDue(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.store.read(ctx).Raw(`SELECT COUNT(*) FROM agents
		WHERE next_fetch_at <= ? AND status NOT IN ('removed', 'rejected')
		AND (lease_owner = '' OR lease_until <= ?)`, utc(now), utc(now)).Scan(&n).Error
	return n, translate(err)
}

// PoolStats are the connection pool statistics of the store, for
// monitoring: the writer pool and the read pool (the same pool on
// PostgreSQL).
type PoolStats struct {
	Write, Read sql.DBStats
}

// DBStats reports the store's connection pools.
func (s *Store) DBStats() PoolStats {
	return PoolStats{Write: s.wsql.Stats(), Read: s.rsql.Stats()}
}
