package registry

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
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
	upd["status"] = string(StatusApproved)
	if err := s.addAudit(tx, Principal{Name: autoApproveActor}, ActionAutoApprove, r.ID, "", detail, now); err != nil {
		return "", err
	}
	return ChangeApproved, nil
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
