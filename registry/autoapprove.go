package registry

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/cardexhq/cardex/cardurl"
)

// AutoApprove is the approval policy of `serve --auto-approve`
// (docs/claims.md).
type AutoApprove string

// Approval policies.
const (
	// AutoApproveNever: every agent waits for an admin (the default).
	AutoApproveNever AutoApprove = "never"
	// AutoApproveClaimed: an agent submitted with a live publisher token
	// from a verified host claim is approved at its first good fetch.
	AutoApproveClaimed AutoApprove = "claimed"
	// AutoApproveVerified: as claimed, and any agent whose card verifies
	// under its origin's keys is approved at its first good fetch, even
	// when submitted anonymously.
	AutoApproveVerified AutoApprove = "verified"
)

// ParseAutoApprove reads a policy name.
func ParseAutoApprove(s string) (AutoApprove, error) {
	switch p := AutoApprove(s); p {
	case AutoApproveNever, AutoApproveClaimed, AutoApproveVerified:
		return p, nil
	}
	return "", fmt.Errorf("auto-approve: %q is not never, claimed or verified", s)
}

// Audit action and actor of an automatic approval.
const (
	ActionAutoApprove = "auto-approve"
	autoApproveActor  = "auto-approve"
)

// autoApprove is the approval-by-policy step of the record path, run on
// each result after applyFetch worked out upd: a pending agent whose
// result leaves it with a current version and no review flag is approved
// when the policy covers it. The trust-regression rule ran before and is
// untouched: a flagged agent is never approved here, and an approved one
// is never changed. It returns the change kind to add ("" for none) and
// writes the audit entry naming the policy and the rule that applied.
func (s *Service) autoApprove(tx *gorm.DB, r *agentRow, res FetchResult, upd map[string]any, now time.Time) (string, error) {
	policy := s.cfg.AutoApprove
	if policy == AutoApproveNever || Status(r.Status) != StatusPending || res.Attempt.ErrorClass != "" {
		return "", nil
	}
	cur, needsReview, trust := r.CurrentVersionSeq, r.NeedsReview, Trust(r.Trust)
	if v, ok := upd["current_version_seq"].(int64); ok {
		cur = v
	}
	if v, ok := upd["needs_review"].(bool); ok {
		needsReview = v
	}
	if v, ok := upd["trust"].(string); ok {
		trust = Trust(v)
	}
	if cur == 0 || needsReview {
		return "", nil
	}
	detail := map[string]any{"policy": policy, "versionSeq": cur, "trust": trust, "from": StatusPending, "to": StatusApproved}
	claimed, err := s.submittedByClaim(tx, r, now)
	switch {
	case err != nil:
		return "", err
	case claimed:
		detail["rule"] = AutoApproveClaimed
		detail["tokenId"] = r.SubmitterTokenID
	case policy == AutoApproveVerified && trust == TrustVerified:
		detail["rule"] = AutoApproveVerified
	default:
		return "", nil
	}
	ok, err := s.countApproval(tx, r, detail, upd, now)
	if err != nil || !ok {
		return "", err
	}
	if r.AutoApproveHeld != "" {
		upd["auto_approve_held"] = ""
	}
	upd["status"] = string(StatusApproved)
	if err := s.addAudit(tx, Principal{Name: autoApproveActor}, ActionAutoApprove, r.ID, "", detail, now); err != nil {
		return "", err
	}
	return ChangeApproved, nil
}

// DefaultAutoApprovePerDomain is how many agents of one registrable
// domain the approval policy approves per UTC day by default
// (--auto-approve-per-domain).
const DefaultAutoApprovePerDomain = 20

// ActionAutoApproveHeld is the audit action of an agent the policy would
// have approved but for the daily bound of its registrable domain.
const ActionAutoApproveHeld = "auto-approve-held"

// countApproval counts one automatic approval against the daily bound of
// the agent's registrable domain (docs/claims.md, docs/threats.md K.97):
// a key a domain's owner holds, or a claim on it, approves at most
// AutoApprovePerDomain of its agents a day. ok is false past the bound:
// the agent stays pending, auto_approve_held says why, and the first time
// it is held an audit entry records it for the curators.
func (s *Service) countApproval(tx *gorm.DB, r *agentRow, detail map[string]any, upd map[string]any, now time.Time) (bool, error) {
	domain, day := cardurl.RegistrableDomain(r.Host), now.UTC().Format(time.DateOnly)
	ins := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&autoApprovalRow{Domain: domain, Day: day})
	if ins.Error != nil {
		return false, ins.Error
	}
	if ins.RowsAffected == 1 {
		// A new day for this domain: the counts of past days are spent.
		if err := tx.Where("domain = ? AND day < ?", domain, day).Delete(&autoApprovalRow{}).Error; err != nil {
			return false, err
		}
	}
	res := tx.Model(&autoApprovalRow{}).Where("domain = ? AND day = ? AND approvals < ?", domain, day, s.cfg.AutoApprovePerDomain).
		Update("approvals", gorm.Expr("approvals + 1"))
	if res.Error != nil {
		return false, res.Error
	}
	if res.RowsAffected == 1 {
		return true, nil
	}
	why := fmt.Sprintf("the policy approved the %d agents of %s it approves per day (%s UTC): a curator decides, or the policy at its next good fetch after the day",
		s.cfg.AutoApprovePerDomain, domain, day)
	if r.AutoApproveHeld == why {
		return false, nil
	}
	upd["auto_approve_held"] = why
	detail["to"], detail["domain"], detail["reason"] = StatusPending, domain, why
	return false, s.addAudit(tx, Principal{Name: autoApproveActor}, ActionAutoApproveHeld, r.ID, "", detail, now)
}

// submittedByClaim reports whether the agent was submitted with a publisher
// token that a verified host claim issued, still live and scoped to the
// agent's host.
func (s *Service) submittedByClaim(tx *gorm.DB, r *agentRow, now time.Time) (bool, error) {
	if r.SubmitterTokenID == "" {
		return false, nil
	}
	var t tokenRow
	err := tx.Where("id = ?", r.SubmitterTokenID).Take(&t).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	live := t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
	p := Principal{Role: Role(t.Role), Hosts: parseList(t.Hosts), Origin: t.Origin}
	return live && t.ClaimID != "" && p.owns(r.Host, r.CardURL), nil
}
