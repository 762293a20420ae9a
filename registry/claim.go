package registry

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// claimLockKey serializes claimers on PostgreSQL so the per-host cap counts
// leases exactly; a claim is one short statement pair per tick, so the
// serialization costs nothing that matters. SQLite's single writer and
// BEGIN IMMEDIATE serialize them already.
const claimLockKey = 0x63617264_65780002

// dueSQL selects due agents whose lease is free or expired, at most perHost
// per host counting the leases already live on that host, oldest due first.
// Rejected and removed agents are never crawled: nobody will see their cards
// until an admin restores them, which makes them due again.
const dueSQL = `
SELECT d.id FROM (
	SELECT a.id, a.next_fetch_at,
		ROW_NUMBER() OVER (PARTITION BY a.host ORDER BY a.next_fetch_at, a.id) AS rn,
		COALESCE(f.n, 0) AS inflight
	FROM agents a
	LEFT JOIN (
		SELECT host, COUNT(*) AS n FROM agents
		WHERE lease_owner <> '' AND lease_until > ?
		GROUP BY host
	) f ON f.host = a.host
	WHERE a.next_fetch_at <= ?
		AND a.status NOT IN ('removed', 'rejected')
		AND (a.lease_owner = '' OR a.lease_until <= ?)
) d
WHERE d.rn + d.inflight <= ?
ORDER BY d.next_fetch_at, d.id
LIMIT ?`

// lockDuePG wraps dueSQL for PostgreSQL: the chosen rows are locked, and
// rows another transaction holds (an admin removing the agent, a crawl
// result being recorded) are skipped rather than waited for.
const lockDuePG = "SELECT id FROM agents WHERE id IN (" + dueSQL + ") FOR UPDATE SKIP LOCKED"

// ClaimDue leases up to limit due agents to owner until now+leaseTTL, at
// most perHost in flight per host (CONTRACT.md §8; ≤ 0 means 2). Two
// claimers, in one process or in replicas sharing PostgreSQL, never get the
// same agent while its lease lives: on PostgreSQL claimers take turns
// (claimLockKey) and lock the rows they pick FOR UPDATE SKIP LOCKED; on
// SQLite the claim is one BEGIN IMMEDIATE transaction on the single writer.
func (s *Service) ClaimDue(ctx context.Context, owner string, now time.Time, leaseTTL time.Duration, limit, perHost int) ([]DueAgent, error) {
	if owner == "" {
		return nil, invalidField("/owner", "required", "a lease owner is required")
	}
	if limit <= 0 {
		return nil, nil
	}
	if perHost <= 0 {
		perHost = 2
	}
	now = utc(now)
	until := utc(now.Add(leaseTTL))
	var rows []agentRow
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		if s.store.dialect == DialectPostgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", int64(claimLockKey)).Error; err != nil {
				return err
			}
		}
		q := dueSQL
		if s.store.dialect == DialectPostgres {
			q = lockDuePG
		}
		var ids []string
		if err := tx.Raw(q, now, now, now, perHost, limit).Scan(&ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		err := tx.Exec(`UPDATE agents SET lease_owner = ?, lease_until = ?
			WHERE id IN ? AND status NOT IN ('removed', 'rejected') AND (lease_owner = '' OR lease_until <= ?)`,
			owner, until, ids, now).Error
		if err != nil {
			return err
		}
		return tx.Where("id IN ? AND lease_owner = ?", ids, owner).Order("next_fetch_at, id").Find(&rows).Error
	})
	if err != nil {
		return nil, err
	}
	out := make([]DueAgent, len(rows))
	for i, r := range rows {
		out[i] = DueAgent{ID: r.ID, CardURL: r.CardURL, FetchedURL: r.FetchedURL, Host: r.Host, ETag: r.ETag,
			LastModified: r.LastModified, ConsecutiveFailures: r.ConsecutiveFailures, ConsecutiveMissing: r.ConsecutiveMissing,
			FailingSince: utcPtr(r.FailingSince), BareHost: r.BareHost, LeaseUntil: until}
		if r.PinnedKeys != nil {
			out[i].PinnedKeys = []byte(*r.PinnedKeys)
		}
	}
	return out, nil
}

// ReleaseLeases gives back every lease owner holds (graceful shutdown): the
// agents stay due and the next claimer, here or in another replica, takes
// them at once instead of waiting for the leases to expire.
func (s *Service) ReleaseLeases(ctx context.Context, owner string) error {
	return s.store.tx(ctx, func(tx *gorm.DB) error {
		return tx.Exec("UPDATE agents SET lease_owner = '', lease_until = NULL WHERE lease_owner = ?", owner).Error
	})
}
