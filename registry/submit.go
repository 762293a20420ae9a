package registry

import (
	"context"
	"errors"
	"time"

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
// The origin's owner's submission of a URL a catalog registered takes the
// agent over instead of answering a duplicate (takeOver). On SQLite,
// concurrent submissions share a write transaction (group.go).
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
	if p.Role == RolePublisher && !p.owns(cu.Host, cu.URL) {
		// A publisher token acts on its own hosts only (docs/threats.md
		// I.79), submissions included.
		return nil, ErrForbidden
	}
	submitter := ""
	if p.Role == RolePublisher {
		submitter = p.TokenID
	}
	now := s.now()
	id := newID()
	var row agentRow
	taken := false
	err = s.submits.do(ctx, s.store, func(tx *gorm.DB, _ *struct{}) error {
		// Set afresh each time: a group's transaction that failed is run
		// again for this call alone (group.go).
		taken = false
		row = agentRow{SubmitterTokenID: submitter,
			ID: id, CardURL: cu.URL, Host: cu.Host, BareHost: cu.BareHost,
			Status: string(StatusPending), Visibility: string(vis), Health: string(HealthUnknown), Trust: string(TrustUnknown),
			NextFetchAt: now, VerifiedThumbprints: "[]", CreatedAt: now, UpdatedAt: now,
		}
		// One read of the URL's row answers both questions: is it known,
		// and may this submission take it over from its catalog?
		var known agentRow
		err := tx.Where("card_url = ?", cu.URL).Take(&known).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
		case err != nil:
			return err
		default:
			ok, err := s.takeOver(tx, p, cu, &known, submitter, now)
			if err != nil {
				return err
			}
			if !ok {
				return knownAgent(&known)
			}
			taken, row = true, known
			return nil
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
	s.log.InfoContext(ctx, "agent submitted", "agent_id", row.ID, "card_url", cu.URL, "actor", actorName(p), "taken_from_catalog", taken)
	// A new row has no probes; one taken over from a catalog may.
	return s.record(s.store.read(ctx), p, &row, taken)
}

// takeOver makes a catalog's agent directly submitted when its origin's
// owner submits its card URL (docs/threats.md K.102): an admin, a
// publisher token scoped to its host (a claim's token), or anyone when the
// catalog that registered it is on another origin (registered before a
// catalog was held to its own origin). The agent keeps its id, status and
// history; it leaves the catalog, which no longer lists it away nor sets
// its search phrases, and is fetched now; r is read again. It returns
// false when r, the URL's row, is not such an agent (the caller answers as
// for any known URL).
func (s *Service) takeOver(tx *gorm.DB, p Principal, cu cardurl.URL, r *agentRow, submitter string, now time.Time) (bool, error) {
	switch {
	case r.CatalogURL == "" || r.CatalogCard != nil || Status(r.Status) == StatusRemoved:
		return false, nil // submitted directly, an inline card (the catalog is its only source), or removed
	case !p.isAdmin() && !p.owns(cu.Host, cu.URL) && cardurl.Origin(r.CatalogURL) == cardurl.Origin(cu.URL):
		return false, nil
	}
	upd := map[string]any{"catalog_url": "", "catalog_missing": false, "catalog_queries": nil,
		"catalog_source": nil, "catalog_identifier": nil,
		"submitter_token_id": submitter, "next_fetch_at": now, "updated_at": now}
	if err := tx.Model(&agentRow{}).Where("id = ?", r.ID).Updates(upd).Error; err != nil {
		return false, err
	}
	detail := map[string]any{"cardUrl": cu.URL, "visibility": r.Visibility, "fromCatalog": r.CatalogURL}
	if err := s.addAudit(tx, p, "submit", r.ID, "", detail, now); err != nil {
		return false, err
	}
	// Its catalog's search phrases leave the index with it.
	if err := s.addChange(tx, r, r, ChangeChanged, now); err != nil {
		return false, err
	}
	return true, tx.Where("id = ?", r.ID).Take(r).Error
}

// existing answers nil when no agent has this card URL, and what
// knownAgent answers for its row otherwise.
func existing(db *gorm.DB, cardURL string) error {
	var r agentRow
	err := db.Select("id, status").Where("card_url = ?", cardURL).Take(&r).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil
	case err != nil:
		return translate(err)
	}
	return knownAgent(&r)
}

// knownAgent is the answer to submitting a URL an agent has already:
// ErrAgentRemoved for a removed one, *DuplicateError otherwise.
func knownAgent(r *agentRow) error {
	if Status(r.Status) == StatusRemoved {
		return ErrAgentRemoved
	}
	return &DuplicateError{AgentID: r.ID}
}
