package registry

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// claimLockKey serializes claimers on PostgreSQL so the per-host cap counts
// leases exactly; a claim is a few short statements per tick, so the
// serialization costs nothing that matters. SQLite's single writer and
// BEGIN IMMEDIATE serialize them already.
const claimLockKey = 0x63617264_65780002

// dueChunkSQL reads the next chunk of claimable agents in due order
// (next_fetch_at, id) after a keyset position, through the agents_due
// index: due, lease free or expired, not rejected or removed (nobody will
// see their cards until an admin restores them, which makes them due
// again). Only the chunk is read, never every due row.
const dueChunkSQL = `SELECT id, host, next_fetch_at FROM agents
	WHERE next_fetch_at <= ? AND (next_fetch_at, id) > (?, ?)
		AND status NOT IN ('removed', 'rejected') AND (lease_owner = '' OR lease_until <= ?)
	ORDER BY next_fetch_at, id LIMIT ?`

// dueWindowSkipSQL reads, from the next window of claimable agents in due
// order (at most its first LIMIT rows are examined), those not on the hosts
// given: the hosts already at their cap are stepped over inside the
// database, and the read stays bounded.
const dueWindowSkipSQL = `SELECT id, host, next_fetch_at FROM (
	SELECT id, host, next_fetch_at FROM agents
	WHERE next_fetch_at <= ? AND (next_fetch_at, id) > (?, ?)
		AND status NOT IN ('removed', 'rejected') AND (lease_owner = '' OR lease_until <= ?)
	ORDER BY next_fetch_at, id LIMIT ?) w
	WHERE host NOT IN ? ORDER BY next_fetch_at, id`

// liveLeasesSQL counts live leases per host, for the hosts of a chunk only
// (agents_host_lease index).
const liveLeasesSQL = `SELECT host, COUNT(*) AS n FROM agents
	WHERE host IN ? AND lease_owner <> '' AND lease_until > ? GROUP BY host`

// ClaimDue leases up to limit due agents to owner until now+leaseTTL, at
// most perHost in flight per host (docs/security.md; ≤ 0 means 2), oldest due
// first. Two claimers, in one process or in replicas sharing PostgreSQL,
// never get the same agent while its lease lives: on PostgreSQL claimers
// take turns (claimLockKey) and lock the rows they pick FOR UPDATE SKIP
// LOCKED; on SQLite the claim is one BEGIN IMMEDIATE transaction on the
// single writer.
//
// The due agents are read in a bounded prefix in due order (pickDue) and
// the per-host cap is applied in that order, counting the leases already
// live on each host (the old query ranked every due agent by host on each
// call: ~18 ms with 10,000 due). A host at its cap is skipped for this
// claim only: its agents stay first in due order and are taken as soon as
// its leases end; the agents of other hosts behind its backlog are reached
// while that backlog is within the prefix, and otherwise as it drains.
//
// Each claimed agent whose newest version is signed and which will be
// fetched conditionally carries that version's bytes (Latest), so a 304 can
// be re-verified against the current keys (docs/threats.md D.52).
func (s *Service) ClaimDue(ctx context.Context, owner string, now time.Time, leaseTTL time.Duration, limit, perHost int) ([]DueAgent, error) {
	perHost, err := leaseArgs(owner, limit, perHost)
	if err != nil || limit <= 0 {
		return nil, err
	}
	now = utc(now)
	until := utc(now.Add(leaseTTL))
	var out []DueAgent
	err = s.claimLeases(ctx, claimLockKey,
		func(tx *gorm.DB) ([]string, error) { return s.pickDue(tx, now, limit, perHost) },
		func(tx *gorm.DB, ids []string) (err error) {
			err = tx.Exec(`UPDATE agents SET lease_owner = ?, lease_until = ?
			WHERE id IN ? AND status NOT IN ('removed', 'rejected') AND (lease_owner = '' OR lease_until <= ?)`,
				owner, until, ids, now).Error
			if err != nil {
				return err
			}
			out, err = claimed(tx, ids, owner, until)
			return err
		})
	return out, err
}

// leaseArgs checks the arguments every lease claim takes and returns the
// per-host cap with its default (≤ 0 means 2). A limit ≤ 0 claims nothing.
func leaseArgs(owner string, limit, perHost int) (int, error) {
	if owner == "" {
		return 0, invalidField("/owner", "required", "a lease owner is required")
	}
	if perHost <= 0 {
		perHost = 2
	}
	return perHost, nil
}

// claimLeases is the one shape of a lease claim (crawls, probes): in one
// transaction, serialized on PostgreSQL by the advisory lock lockKey, pick
// chooses the candidates, rows another transaction holds (an admin
// removing the agent, a result being recorded) are skipped rather than
// waited for, and take leases what is left and reads it back.
func (s *Service) claimLeases(ctx context.Context, lockKey int64, pick func(*gorm.DB) ([]string, error), take func(*gorm.DB, []string) error) error {
	return s.store.tx(ctx, func(tx *gorm.DB) error {
		if s.store.dialect == DialectPostgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", lockKey).Error; err != nil {
				return err
			}
		}
		ids, err := pick(tx)
		if err != nil || len(ids) == 0 {
			return err
		}
		if s.store.dialect == DialectPostgres {
			if err := tx.Raw("SELECT id FROM agents WHERE id IN ? FOR UPDATE SKIP LOCKED", ids).Scan(&ids).Error; err != nil {
				return err
			}
			if len(ids) == 0 {
				return nil
			}
		}
		return take(tx, ids)
	})
}

// dueRow is one row of a due chunk.
type dueRow struct {
	ID          string
	Host        string
	NextFetchAt time.Time
}

// pickDue chooses up to limit due agents in due order under the per-host
// cap. It reads the first chunk (4×limit) of claimable agents; when the cap
// left it short, one bounded window after it (16×limit rows examined)
// without the hosts already at their cap, so a backlog of one busy host is
// stepped over inside the database. Agents beyond the window wait for a
// later claim: a claim never reads more than 20×limit rows, however many
// agents are due.
func (s *Service) pickDue(tx *gorm.DB, now time.Time, limit, perHost int) ([]string, error) {
	chunk := max(4*limit, 64)
	inflight := map[string]int{}
	var picked []string
	var rows []dueRow
	if err := tx.Raw(dueChunkSQL, now, time.Time{}, "", now, chunk).Scan(&rows).Error; err != nil {
		return nil, err
	}
	picked, err := pickRows(tx, rows, now, limit, perHost, inflight, picked)
	if err != nil || len(picked) == limit || len(rows) < chunk {
		return picked, err
	}
	var capped []string
	for h, n := range inflight {
		if n >= perHost {
			capped = append(capped, h)
		}
	}
	if len(capped) == 0 {
		return picked, nil // short of due agents, not of room
	}
	last := rows[len(rows)-1]
	rows = nil
	if err := tx.Raw(dueWindowSkipSQL, now, utc(last.NextFetchAt), last.ID, now, 4*chunk, capped).Scan(&rows).Error; err != nil {
		return nil, err
	}
	return pickRows(tx, rows, now, limit, perHost, inflight, picked)
}

// pickRows applies the per-host cap to rows in order, reading the live
// leases of hosts not seen before, and appends the agents it takes.
func pickRows(tx *gorm.DB, rows []dueRow, now time.Time, limit, perHost int, inflight map[string]int, picked []string) ([]string, error) {
	var hosts []string
	for _, r := range rows {
		if _, ok := inflight[r.Host]; !ok {
			inflight[r.Host] = 0
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) > 0 {
		var counts []struct {
			Host string
			N    int
		}
		if err := tx.Raw(liveLeasesSQL, hosts, now).Scan(&counts).Error; err != nil {
			return nil, err
		}
		for _, c := range counts {
			inflight[c.Host] = c.N
		}
	}
	for _, r := range rows {
		if len(picked) == limit {
			break
		}
		if inflight[r.Host] < perHost {
			inflight[r.Host]++
			picked = append(picked, r.ID)
		}
	}
	return picked, nil
}

// claimed reads the agents just leased, with the bytes of the newest version
// of those whose verdict depends on keys and whose next fetch is
// conditional: an unsigned card's verdict is fixed by its bytes, and an
// unconditional fetch brings the bytes anyway.
func claimed(tx *gorm.DB, ids []string, owner string, until time.Time) ([]DueAgent, error) {
	var rows []agentRow
	if err := tx.Where("id IN ? AND lease_owner = ?", ids, owner).Order("next_fetch_at, id").Find(&rows).Error; err != nil {
		return nil, err
	}
	var latest []struct {
		AgentID    string
		Raw        []byte
		FetchedURL string
	}
	err := tx.Raw(`SELECT v.agent_id, v.raw, v.fetched_url FROM card_versions v
		JOIN agents a ON a.id = v.agent_id AND a.latest_version_seq = v.seq
		WHERE a.id IN ? AND v.trust <> 'unsigned' AND (a.etag <> '' OR a.last_modified <> '')`, ids).Scan(&latest).Error
	if err != nil {
		return nil, err
	}
	byID := make(map[string]int, len(latest))
	for i, l := range latest {
		byID[l.AgentID] = i
	}
	out := make([]DueAgent, len(rows))
	for i, r := range rows {
		out[i] = DueAgent{ID: r.ID, CardURL: r.CardURL, FetchedURL: r.FetchedURL, Host: r.Host, ETag: r.ETag,
			LastModified: r.LastModified, ConsecutiveFailures: r.ConsecutiveFailures, ConsecutiveMissing: r.ConsecutiveMissing,
			FailingSince: utcPtr(r.FailingSince), BareHost: r.BareHost, LeaseUntil: until,
			CatalogCard: r.CatalogCard, CatalogMissing: r.CatalogMissing, Catalog: r.CatalogURL}
		if r.PinnedKeys != nil {
			out[i].PinnedKeys = []byte(*r.PinnedKeys)
		}
		if j, ok := byID[r.ID]; ok {
			out[i].Latest, out[i].LatestURL = latest[j].Raw, latest[j].FetchedURL
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
