package registry

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// AgentFetch is one crawl result of a RecordFetches batch.
type AgentFetch struct {
	AgentID string
	Result  FetchResult
}

// RecordFetch stores one crawl result for an agent owner has leased: a
// batch of one (RecordFetches has the semantics).
func (s *Service) RecordFetch(ctx context.Context, owner, agentID string, res FetchResult) error {
	errs, err := s.RecordFetches(ctx, owner, []AgentFetch{{AgentID: agentID, Result: res}})
	if err != nil {
		return err
	}
	return errs[0]
}

// RecordFetches stores crawl results for agents owner has leased, all in one
// transaction with their change-log rows (docs/design.md principle 2; the issue's
// "writes are batched so SQL is not the bottleneck"). Per result:
//
//   - an error keeps the last good card, records lastError, the attempt and
//     the back-off counters; health becomes failing, or gone after 3
//     consecutive 404/410 or when failing for GoneAfter (docs/design.md crawl
//     policy);
//   - a 304, or a 200 with the bytes of the newest stored version, is
//     "unchanged": validators and last_fetched_at move. When it carries a
//     verdict (the crawler re-verified the stored bytes, docs/threats.md
//     D.44/D.52) that differs from the stored one in trust or thumbprints,
//     the version's verdict is updated in place and, for the current
//     version, the agent's trust with it (a `trust` change). The bytes are
//     the same, so no version is added and needsReview is left alone: a
//     revoked key or a failing key set is shown as the trust it causes, not
//     queued as a candidate there is nothing to choose between (and a
//     transient key-set failure recovers by itself on a later crawl);
//   - new bytes make a new version (docs/threats.md C.38: never updated in
//     place) with its diff from the previous one. It becomes current, even
//     for an approved agent (approval is of the agent, docs/api.md "Curation and visibility"),
//     unless it is a trust regression of a verified agent (D.49): then the
//     verified version stays current, the new one is the candidate and the
//     agent needsReview.
//
// Change kinds written: changed (a version was added), health, trust (the
// agent's values changed). No `fetched` row is written for unchanged
// results, so the 304 path adds nothing to the change log. updated_at moves
// only with those changes.
//
// The lease guards each write: when the agent was removed (remove drops the
// lease) or its lease is now someone else's, nothing is written for that
// result and its entry in the returned slice is ErrLeaseLost (docs/threats.md
// F.64); an unknown agent is ErrNotFound and a success without a parsed card
// a ValidationError. Such per-result answers never fail the others. The
// second return is for the batch as a whole (the database is unavailable,
// ctx ended): then nothing of the batch was written. A recorded result
// clears the lease and sets next_fetch_at to its NextFetchAt.
func (s *Service) RecordFetches(ctx context.Context, owner string, batch []AgentFetch) ([]error, error) {
	errs := make([]error, len(batch))
	now := s.now()
	var ids []string
	for i, f := range batch {
		ok := f.Result.Attempt.ErrorClass == "" && !f.Result.NotModified
		if ok && f.Result.Card == nil {
			errs[i] = invalidField("/card", "required", "a successful fetch carries the parsed card")
			continue
		}
		ids = append(ids, f.AgentID)
	}
	if len(ids) == 0 {
		return errs, nil
	}
	outcome := make([]error, len(batch))
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		copy(outcome, errs)
		rows, err := s.lockAgents(tx, ids)
		if err != nil {
			return err
		}
		latest, err := latestVersions(tx, rows, batch)
		if err != nil {
			return err
		}
		w := &batchWrites{}
		for i, f := range batch {
			if outcome[i] != nil {
				continue
			}
			r := rows[f.AgentID]
			switch {
			case r == nil:
				outcome[i] = ErrNotFound
				continue
			case owner == "" || r.LeaseOwner != owner || Status(r.Status) == StatusRemoved:
				outcome[i] = ErrLeaseLost
				continue
			}
			if err := s.applyFetch(tx, r, latest[f.AgentID], f.Result, now, w); err != nil {
				return err
			}
			// The lease is spent: a second result for the agent in the
			// same batch is a lost lease, as it would be one at a time.
			r.LeaseOwner = ""
		}
		return s.flush(tx, w)
	})
	if err != nil {
		return nil, err
	}
	return outcome, nil
}

// lockAgents reads the batch's agent rows for update in one statement, in
// id order so two transactions locking overlapping sets cannot deadlock on
// PostgreSQL; SQLite's BEGIN IMMEDIATE already holds the only write lock.
func (s *Service) lockAgents(tx *gorm.DB, ids []string) (map[string]*agentRow, error) {
	q := "SELECT * FROM agents WHERE id IN ? ORDER BY id"
	if s.store.dialect == DialectPostgres {
		q += " FOR UPDATE"
	}
	var rows []agentRow
	if err := tx.Raw(q, ids).Scan(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make(map[string]*agentRow, len(rows))
	for i := range rows {
		out[rows[i].ID] = &rows[i]
	}
	return out, nil
}

// latestVersions reads the newest stored version (without its bytes) of
// every agent whose result is a success that compares with it: a 200 (same
// bytes?) or a re-verified 304 (same verdict?). Plain 304s and errors need
// nothing, so the unchanged path reads no version.
func latestVersions(tx *gorm.DB, rows map[string]*agentRow, batch []AgentFetch) (map[string]*versionRow, error) {
	var ids []string
	for _, f := range batch {
		r := rows[f.AgentID]
		res := f.Result
		if r == nil || r.LatestVersionSeq == 0 || res.Attempt.ErrorClass != "" || (res.NotModified && res.Raw == nil) {
			continue
		}
		ids = append(ids, f.AgentID)
	}
	out := map[string]*versionRow{}
	if len(ids) == 0 {
		return out, nil
	}
	var vs []versionRow
	err := tx.Raw(`SELECT v.agent_id, v.seq, v.sha256, v.content_sha256, v.trust, v.verdict FROM card_versions v
		JOIN agents a ON a.id = v.agent_id AND a.latest_version_seq = v.seq WHERE a.id IN ?`, ids).Scan(&vs).Error
	if err != nil {
		return nil, translate(err)
	}
	for i := range vs {
		out[vs[i].AgentID] = &vs[i]
	}
	return out, nil
}

// applyFetch works out one result's writes: the agent's new values, its
// trace, version and change rows, collected for flush's multi-row
// statements.
func (s *Service) applyFetch(tx *gorm.DB, r *agentRow, latest *versionRow, res FetchResult, now time.Time, w *batchWrites) error {
	at := utc(res.Attempt.At)
	if res.Attempt.At.IsZero() {
		at = now
	}
	next := utc(res.NextFetchAt)
	if res.NextFetchAt.IsZero() {
		next = at.Add(time.Hour)
	}
	upd := map[string]any{"lease_owner": "", "lease_until": nil, "next_fetch_at": next, "last_fetched_at": at}
	var kinds []string
	result := ResultUnchanged
	health := HealthOK
	switch {
	case res.Attempt.ErrorClass != "":
		result = ResultError
		health = s.recordFailure(r, res, at, upd)
	default:
		recordSuccess(r, res, at, upd)
		added, err := s.maybeAddVersion(tx, r, latest, res, at, upd, w)
		if err != nil {
			return err
		}
		if added {
			result = ResultNewVersion
			kinds = append(kinds, ChangeChanged)
		}
	}
	upd["health"] = string(health)
	if health != Health(r.Health) {
		kinds = append(kinds, ChangeHealth)
	}
	if t, ok := upd["trust"]; ok && Trust(t.(string)) != Trust(r.Trust) {
		kinds = append(kinds, ChangeTrust)
	}
	if k, err := s.autoApprove(tx, r, res, upd, now); err != nil {
		return err
	} else if k != "" {
		kinds = append(kinds, k)
	}
	if len(kinds) > 0 {
		upd["updated_at"] = now
	}
	w.agents = append(w.agents, agentUpdate{id: r.ID, cols: upd})
	w.attempt(r.ID, res.Attempt, result, at)
	before := r.audience()
	after := before
	if v, ok := upd["status"].(string); ok {
		after.status = Status(v)
	}
	after.health = health
	for _, k := range kinds {
		w.changes = append(w.changes, changeOf(r.ID, k, now, &before, after))
	}
	return nil
}
