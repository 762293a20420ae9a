package registry

import (
	"context"
	"time"
)

// probeCountsSQL counts the approved agents and, among them, those never
// probed and those due now, leased or not. It names only the columns of
// agents_probe_next (status, probe_next_at, id), so SQLite answers it from
// that index alone (a covering index: no agent row is read; about a fifth
// of the time of the claim's whole condition at 100k agents); PostgreSQL
// scans the table when most agents are approved. The prober runs it at
// most once a minute (docs/liveness.md "Pacing").
const probeCountsSQL = `SELECT COUNT(*) AS approved,
	COALESCE(SUM(CASE WHEN probe_next_at IS NULL THEN 1 ELSE 0 END), 0) AS never,
	COALESCE(SUM(CASE WHEN probe_next_at IS NULL OR probe_next_at <= ? THEN 1 ELSE 0 END), 0) AS due
	FROM agents WHERE status = 'approved'`

// ProbeCounts are the probe schedule's sizes across all replicas.
type ProbeCounts struct {
	// Probeable is the number of approved agents: an upper bound of those
	// the prober probes (an approved agent whose probing an admin turned
	// off is counted too; they are few, and counting them only raises the
	// prober's pace a little).
	Probeable int64
	// NeverProbed of them (due at once), and Due now: never probed or
	// their next probe time passed, leased or not.
	NeverProbed, Due int64
}

// CountProbes counts the approved agents, those never probed and those due
// at now: the prober paces its claims by the first (docs/liveness.md
// "Pacing") and exports all three.
func (s *Service) CountProbes(ctx context.Context, now time.Time) (ProbeCounts, error) {
	var row struct{ Approved, Never, Due int64 }
	err := s.store.read(ctx).Raw(probeCountsSQL, utc(now)).Scan(&row).Error
	return ProbeCounts{Probeable: row.Approved, NeverProbed: row.Never, Due: row.Due}, translate(err)
}
