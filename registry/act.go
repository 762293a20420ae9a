package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// lockAgent reads the agent row for update inside a write transaction. On
// PostgreSQL the row lock orders concurrent admin actions and crawl results
// (docs/threats.md F.64); SQLite's BEGIN IMMEDIATE already holds the only
// write lock.
func (s *Service) lockAgent(tx *gorm.DB, id string) (*agentRow, error) {
	var r agentRow
	q := "SELECT * FROM agents WHERE id = ?"
	if s.store.dialect == DialectPostgres {
		q += " FOR UPDATE"
	}
	res := tx.Raw(q, id).Scan(&r)
	if res.Error != nil {
		return nil, translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, ErrNotFound
	}
	return &r, nil
}

var actionChange = map[Action]string{
	ActionApprove: ChangeApproved, ActionReject: ChangeRejected, ActionSuspend: ChangeSuspended,
	ActionRestore: ChangeRestored, ActionRemove: ChangeRemoved,
}

// Act applies a curation action (docs/api.md "Curation and visibility"), admins only. Reject on
// an approved agent flagged needsReview declines its candidate and keeps the
// current version. Repeating an
// action already in effect returns the agent and writes nothing
// (docs/threats.md I.80): approve on an approved, unflagged agent; reject on
// rejected; suspend on suspended; remove on removed; restore on an agent
// that is already approved or pending. Approve names the version under
// review in VersionSeq: the current version for a pending agent, the
// candidate for an approved agent flagged needsReview (re-approval makes the
// candidate current). Anything else is *VersionConflictError carrying the
// version under review (F.65), including 0 when nothing was fetched yet.
//
// A publisher token may withdraw (remove) the agents of its own hosts; the
// audit entry names it. Every other action, and any action on another
// host's agent, is ErrForbidden to it.
func (s *Service) Act(ctx context.Context, p Principal, id string, a Action, req ActionRequest) (*Agent, error) {
	if err := checkAct(p, a, req); err != nil {
		return nil, err
	}
	// On SQLite, concurrent actions share a transaction (group.go).
	var out *agentRow
	err := s.acts.do(ctx, s.store, func(tx *gorm.DB, w *actWrites) error {
		var err error
		out, err = s.actIn(tx, p, id, a, req, s.now(), w)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "curation action", "agent_id", id, "action", string(a), "status", out.Status, "actor", actorName(p))
	return s.agentRecord(s.store.read(ctx), p, out)
}

// checkAct is what Act refuses before reading anything.
func checkAct(p Principal, a Action, req ActionRequest) error {
	if err := Authorize(p, ActionNeed(a)); err != nil {
		return err
	}
	if _, ok := actionChange[a]; !ok {
		return invalidField("/action", "enum", "unknown action "+string(a))
	}
	if a == ActionApprove && req.VersionSeq == nil {
		return invalidField("/versionSeq", "required", "versionSeq is required to approve")
	}
	return nil
}

// actIn applies one curation action inside the write transaction tx and
// returns the agent row after it; its audit entry and change-log rows go
// to w, for writeActs before the commit. Refusals (not found, forbidden,
// conflicts, invalid transitions) are returned before anything is written,
// so a caller acting on many agents in one transaction (ActMany, and Act's group commit)
// can record them per item and go on.
func (s *Service) actIn(tx *gorm.DB, p Principal, id string, a Action, req ActionRequest, now time.Time, w *actWrites) (*agentRow, error) {
	withdraw := a == ActionRemove && p.Role == RolePublisher
	r, err := w.lock(s, tx, id)
	if err != nil {
		return nil, err
	}
	if withdraw && !p.owns(r.Host, r.CardURL) {
		return nil, ErrForbidden
	}
	from := Status(r.Status)
	upd, err := s.transition(tx, r, a, req, now)
	if err != nil || upd == nil {
		return r, err
	}
	upd["updated_at"] = now
	// The row after the update comes back from the UPDATE itself
	// (RETURNING, both dialects), not from a second read holding the writer.
	out := &agentRow{}
	if err := tx.Model(out).Clauses(clause.Returning{}).Where("id = ?", id).Updates(upd).Error; err != nil {
		return nil, err
	}
	if w.locked != nil {
		w.locked[id] = out // a later item of the same call starts from here
	}
	to, declined := upd["status"], a == ActionReject && from == StatusApproved
	if declined {
		to = from
	}
	detail := map[string]any{"from": from, "to": to}
	if req.VersionSeq != nil {
		detail["versionSeq"] = *req.VersionSeq
	}
	if declined {
		detail["declinedVersionSeq"] = r.CandidateVersionSeq
		detail["currentVersionSeq"] = r.CurrentVersionSeq
	}
	audit, err := auditOf(p, string(a), id, req.Reason, detail, now)
	if err != nil {
		return nil, err
	}
	w.audits = append(w.audits, audit)
	if Trust(out.Trust) != Trust(r.Trust) {
		w.changes = append(w.changes, agentChange(r, out, ChangeTrust, now))
	}
	if !declined {
		// A declined candidate changes nothing anyone lists or reads: the
		// current version, status and trust are as they were; the audit
		// entry says who declined which version.
		w.changes = append(w.changes, agentChange(r, out, actionChange[a], now))
	}
	return out, nil
}

// actWrites are the rows the actions of one transaction insert, written
// together by writeActs after every agent's update, and the agent rows
// read for update before the actions when a call names them all at once.
type actWrites struct {
	audits  []auditRow
	changes []changeRow
	// locked holds ActMany's agents, read for update in one statement
	// (lockAgents) and kept as each action leaves them; nil: each action
	// reads its own row.
	locked map[string]*agentRow
}

// lock is the agent row an action starts from.
func (w *actWrites) lock(s *Service, tx *gorm.DB, id string) (*agentRow, error) {
	if w.locked == nil {
		return s.lockAgent(tx, id)
	}
	r, ok := w.locked[id]
	if !ok {
		return nil, ErrNotFound
	}
	c := *r
	return &c, nil
}

// writeActs inserts the audit entries, then the change-log rows last
// (addChanges: under PostgreSQL's change lock, held only to the commit).
func (s *Service) writeActs(tx *gorm.DB, w *actWrites) error {
	if len(w.audits) > 0 {
		if err := tx.Create(&w.audits).Error; err != nil {
			return err
		}
	}
	return s.addChanges(tx, w.changes)
}

// MaxBulk is how many agents one ActMany takes (docs/api.md "Bulk
// curation").
const MaxBulk = 1000

// BulkItem is one agent of a bulk action, at the version the caller saw.
type BulkItem struct {
	ID         string
	VersionSeq *int64
}

// BulkResult is one item's outcome: the agent's curation state after the
// action, or why it was refused (the errors Act returns).
type BulkResult struct {
	ID          string
	Status      Status
	VersionSeq  int64
	NeedsReview bool
	Trust       Trust
	Err         error
}

// ActMany applies action a to every item in one write transaction, with
// the same rules, audit entries and change-log entries as Act one by one:
// an item that Act would refuse (not found, version conflict, invalid
// transition) is refused alone and the others go ahead. Only a storage
// failure fails the whole call, and then nothing is written. It holds the
// write lock once for all items, which is what makes importing a
// catalogue's approvals fast (docs/benchmarks.md).
func (s *Service) ActMany(ctx context.Context, p Principal, a Action, items []BulkItem, reason string) ([]BulkResult, error) {
	if len(items) == 0 || len(items) > MaxBulk {
		return nil, invalidField("/items", "size", fmt.Sprintf("items must hold 1 to %d agents", MaxBulk))
	}
	if err := checkAct(p, a, ActionRequest{VersionSeq: new(int64)}); err != nil {
		return nil, err
	}
	results := make([]BulkResult, len(items))
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		now := s.now()
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		// Every row first, in id order, as the crawl's and the prober's
		// batches lock theirs: locked one by one in the items' order, an
		// item's row waited while the change-log lock taken for the items
		// before it was held, and a crawl batch holding that row waited
		// for the change-log lock — a deadlock PostgreSQL broke by failing
		// the crawl batch (TestActManyConcurrentOrders).
		locked, err := s.lockAgents(tx, ids)
		if err != nil {
			return err
		}
		w := actWrites{locked: locked}
		for i, it := range items {
			results[i] = BulkResult{ID: it.ID}
			req := ActionRequest{Reason: reason, VersionSeq: it.VersionSeq}
			if a == ActionApprove && it.VersionSeq == nil {
				results[i].Err = invalidField(fmt.Sprintf("/items/%d/versionSeq", i), "required", "versionSeq is required to approve")
				continue
			}
			r, err := s.actIn(tx, p, it.ID, a, req, now, &w)
			switch {
			case err == nil:
				results[i].Status, results[i].VersionSeq = Status(r.Status), r.CurrentVersionSeq
				results[i].NeedsReview, results[i].Trust = r.NeedsReview, Trust(r.Trust)
			case isRefusal(err):
				results[i].Err = err
			default:
				return err
			}
		}
		return s.writeActs(tx, &w)
	})
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "bulk curation action", "action", string(a), "items", len(items), "actor", actorName(p))
	return results, nil
}

// isRefusal reports whether err is an item's own refusal rather than a
// storage failure.
func isRefusal(err error) bool {
	var vc *VersionConflictError
	var dup *DuplicateError
	return errors.As(err, &vc) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidTransition) ||
		errors.Is(err, ErrForbidden) || errors.Is(err, ErrValidation) || errors.As(err, &dup) || errors.Is(err, ErrAgentRemoved)
}

// transition returns the column updates of action a on r, nil for a repeat
// already in effect, or the error that refuses it.
func (s *Service) transition(tx *gorm.DB, r *agentRow, a Action, req ActionRequest, now time.Time) (map[string]any, error) {
	st := Status(r.Status)
	switch a {
	case ActionApprove:
		switch {
		case st == StatusApproved && r.NeedsReview:
			if *req.VersionSeq != r.CandidateVersionSeq {
				return nil, &VersionConflictError{CurrentVersionSeq: r.CandidateVersionSeq}
			}
			return s.promoteCandidate(tx, r)
		case st == StatusApproved:
			return nil, nil
		case st == StatusPending:
			if r.CurrentVersionSeq == 0 || *req.VersionSeq != r.CurrentVersionSeq {
				return nil, &VersionConflictError{CurrentVersionSeq: r.CurrentVersionSeq}
			}
			return map[string]any{"status": string(StatusApproved)}, nil
		}
	case ActionReject, ActionSuspend:
		// Optional for these: when given, the decision is bound to the
		// version the admin looked at, as approve always is, so a
		// bulk decision taken on a list never lands on a card that
		// changed since.
		if req.VersionSeq != nil && *req.VersionSeq != underReview(r) {
			return nil, &VersionConflictError{CurrentVersionSeq: underReview(r)}
		}
	}
	switch a {
	case ActionReject:
		switch st {
		case StatusRejected:
			return nil, nil
		case StatusPending:
			return map[string]any{"status": string(StatusRejected)}, nil
		case StatusApproved:
			if r.NeedsReview && r.CandidateVersionSeq > 0 {
				// Declining a flagged candidate (docs/api.md "Curation and
				// visibility"): the agent stays approved on its last trusted
				// version. The declined bytes stay the newest version, so
				// crawls that bring them again are the same version and do
				// not flag it again; a card that changes is a new version
				// and is reviewed as any other.
				return map[string]any{"candidate_version_seq": 0, "needs_review": false}, nil
			}
		}
	case ActionSuspend:
		switch st {
		case StatusSuspended:
			return nil, nil
		case StatusApproved:
			return map[string]any{"status": string(StatusSuspended)}, nil
		}
	case ActionRestore:
		switch st {
		case StatusApproved, StatusPending:
			return nil, nil
		case StatusSuspended:
			return map[string]any{"status": string(StatusApproved)}, nil
		case StatusRejected, StatusRemoved:
			// Back to review, crawled again at once: the card may have changed
			// while nobody looked.
			return map[string]any{"status": string(StatusPending), "next_fetch_at": now}, nil
		}
	case ActionRemove:
		if st == StatusRemoved {
			return nil, nil
		}
		// Dropping the lease makes an in-flight crawl's RecordFetch answer
		// ErrLeaseLost and write nothing (docs/threats.md F.64).
		return map[string]any{"status": string(StatusRemoved), "lease_owner": "", "lease_until": nil}, nil
	}
	return nil, ErrInvalidTransition
}

// underReview is the version a decision on r is about: the candidate of a
// flagged agent, else the current version.
func underReview(r *agentRow) int64 {
	if r.NeedsReview && r.CandidateVersionSeq > 0 {
		return r.CandidateVersionSeq
	}
	return r.CurrentVersionSeq
}

// promoteCandidate makes a flagged agent's candidate current: the admin has
// reviewed the trust regression (docs/api.md "Curation and visibility") and accepts the new card,
// and any key that verified it becomes one seen verified for this agent.
func (s *Service) promoteCandidate(tx *gorm.DB, r *agentRow) (map[string]any, error) {
	var v versionRow
	if err := tx.Select("seq, trust, verdict, card").Where("agent_id = ? AND seq = ?", r.ID, r.CandidateVersionSeq).Take(&v).Error; err != nil {
		return nil, translate(err)
	}
	var vd verdict
	_ = json.Unmarshal([]byte(v.Verdict), &vd)
	seen := parseList(r.VerifiedThumbprints)
	if Trust(v.Trust) == TrustVerified {
		for _, t := range vd.Thumbprints {
			if !slices.Contains(seen, t) {
				seen = append(seen, t)
			}
		}
	}
	return map[string]any{
		"current_version_seq": v.Seq, "candidate_version_seq": 0, "needs_review": false,
		"trust": v.Trust, "verified_thumbprints": jsonList(seen), "name": cardName(v.Card),
	}, nil
}

func cardName(cardJSON string) string {
	var c struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal([]byte(cardJSON), &c)
	return c.Name
}
