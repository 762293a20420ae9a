package registry

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/cardurl"
)

// Submit registers a card URL (docs/api.md "Submit"). Equivalent
// spellings normalize to one identity, and the UNIQUE card_url constraint
// makes concurrent submissions of one agent yield exactly one row; the
// others get *DuplicateError with its id (docs/threats.md A.6). A removed
// agent's URL answers ErrAgentRemoved until an admin restores it. Only
// admins may submit with visibility internal; a publisher token only on its
// own hosts, and the agent remembers it (approval by policy, autoapprove.go).
func (s *Service) Submit(ctx context.Context, p Principal, rawURL string, vis Visibility) (*Agent, error) {
	switch vis {
	case "":
		vis = VisibilityPublic
	case VisibilityPublic:
	case VisibilityInternal:
		if !p.isAdmin() {
			return nil, ErrForbidden
		}
	default:
		return nil, invalidField("/visibility", "enum", `visibility must be "public" or "internal"`)
	}
	cu, err := cardurl.Normalize(rawURL, s.cfg.URLPolicy)
	if err != nil {
		return nil, err
	}
	if p.Role == RolePublisher && !p.owns(cu.Host) {
		// A publisher token acts on its own hosts only (docs/threats.md
		// I.79), submissions included.
		return nil, ErrForbidden
	}
	submitter := ""
	if p.Role == RolePublisher {
		submitter = p.TokenID
	}
	now := s.now()
	row := agentRow{SubmitterTokenID: submitter,
		ID: newID(), CardURL: cu.URL, Host: cu.Host, BareHost: cu.BareHost,
		Status: string(StatusPending), Visibility: string(vis), Health: string(HealthUnknown), Trust: string(TrustUnknown),
		NextFetchAt: now, VerifiedThumbprints: "[]", CreatedAt: now, UpdatedAt: now,
	}
	err = s.store.tx(ctx, func(tx *gorm.DB) error {
		if err := existing(tx, cu.URL); err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if cu.BareHost {
			// A bare host may list several agents in its AI Catalog: crawl
			// that too (docs/discovery.md).
			if err := addCatalog(tx, hostCatalogURL(cu.URL), now); err != nil {
				return err
			}
		}
		if err := s.addAudit(tx, p, "submit", row.ID, "", map[string]any{"cardUrl": cu.URL, "visibility": vis}, now); err != nil {
			return err
		}
		return s.addChange(tx, nil, &row, ChangeSubmitted, now)
	})
	if errors.Is(err, errUniqueViolation) {
		// Lost a race with a concurrent submission (PostgreSQL blocks on the
		// unique index until the winner commits): answer like the check would.
		err = existing(s.store.read(ctx), cu.URL)
		if err == nil {
			err = errors.New("submit: card URL is taken but its row is not visible")
		}
	}
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "agent submitted", "agent_id", row.ID, "card_url", cu.URL, "actor", actorName(p))
	return s.agentRecord(s.store.read(ctx), p, &row)
}

// existing answers nil when no agent has this card URL, ErrAgentRemoved for
// a removed one and *DuplicateError otherwise.
func existing(db *gorm.DB, cardURL string) error {
	var r agentRow
	err := db.Select("id, status").Where("card_url = ?", cardURL).Take(&r).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil
	case err != nil:
		return translate(err)
	case Status(r.Status) == StatusRemoved:
		return ErrAgentRemoved
	}
	return &DuplicateError{AgentID: r.ID}
}
