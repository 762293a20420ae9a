package registry

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// CatalogStatus is what a curator decided about a catalog
// (docs/discovery.md "A catalog's lifecycle").
type CatalogStatus string

// Catalog statuses: an active catalog is crawled on schedule (unless its
// health is gone); a paused one is not crawled until resumed; a removed
// one is never crawled again. The agents a catalog brought stay where
// they are whatever its status, with the catalog as their provenance.
const (
	CatalogActive  CatalogStatus = "active"
	CatalogPaused  CatalogStatus = "paused"
	CatalogRemoved CatalogStatus = "removed"
)

// Audit actions of the catalog lifecycle.
const (
	ActionCatalogPause  = "catalog-pause"
	ActionCatalogResume = "catalog-resume"
	ActionCatalogRemove = "catalog-remove"
)

// catalogHealth sets the catalog's health from a crawl by the agents'
// rule (goneAfter): a failed crawl counts as a failure, a 404 or 410 of
// its root document as missing; any crawl that read it (or a 304) clears
// both.
func (s *Service) catalogHealth(r *catalogRow, c CatalogCrawl, at time.Time, upd map[string]any) {
	if c.Error == "" {
		upd["health"], upd["consecutive_failures"], upd["consecutive_missing"], upd["failing_since"] =
			HealthOK, 0, 0, nil
		return
	}
	failingSince := at
	if r.FailingSince != nil {
		failingSince = utc(*r.FailingSince)
	}
	missing := 0
	if c.HTTPStatus == 404 || c.HTTPStatus == 410 {
		missing = r.ConsecutiveMissing + 1
	}
	health := HealthFailing
	if s.goneAfter(missing, failingSince, at) {
		health = HealthGone
	}
	upd["health"], upd["consecutive_failures"], upd["consecutive_missing"], upd["failing_since"] =
		health, r.ConsecutiveFailures+1, missing, failingSince
}

// PauseCatalog stops crawling a catalog until it is resumed (admins).
// Pausing a paused catalog changes nothing and is not audited again; a
// removed catalog cannot be paused (ErrInvalidTransition).
func (s *Service) PauseCatalog(ctx context.Context, p Principal, id string) (*Catalog, error) {
	return s.setCatalogStatus(ctx, p, id, CatalogPaused)
}

// ResumeCatalog makes a paused catalog, or an active one whose health is
// gone, crawled again at once, with its failures forgotten (admins). An
// active catalog that is not gone is left as it is and not audited; a
// removed catalog cannot be resumed (ErrInvalidTransition).
func (s *Service) ResumeCatalog(ctx context.Context, p Principal, id string) (*Catalog, error) {
	return s.setCatalogStatus(ctx, p, id, CatalogActive)
}

// RemoveCatalog stops crawling a catalog for good (admins). The agents it
// brought stay, each with the catalog as its provenance; a removed
// catalog no longer withdraws them or sets their representative queries.
// Removing a removed catalog changes nothing and is not audited again.
func (s *Service) RemoveCatalog(ctx context.Context, p Principal, id string) (*Catalog, error) {
	return s.setCatalogStatus(ctx, p, id, CatalogRemoved)
}

func (s *Service) setCatalogStatus(ctx context.Context, p Principal, id string, to CatalogStatus) (*Catalog, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	var out Catalog
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		var r catalogRow
		if err := tx.Where("id = ?", id).Take(&r).Error; err != nil {
			return err
		}
		var agents int64
		if err := tx.Model(&agentRow{}).Where("catalog_url = ?", r.URL).Count(&agents).Error; err != nil {
			return err
		}
		from := CatalogStatus(r.Status)
		action := ""
		upd := map[string]any{"status": to}
		switch {
		case from == CatalogRemoved && to != CatalogRemoved:
			return ErrInvalidTransition
		case to == CatalogActive && (from == CatalogPaused || Health(r.Health) == HealthGone):
			action = ActionCatalogResume
			now := s.now()
			upd["next_crawl_at"], upd["health"], upd["consecutive_failures"], upd["consecutive_missing"], upd["failing_since"] =
				now, HealthUnknown, 0, 0, nil
		case from == to:
		case to == CatalogPaused:
			action = ActionCatalogPause
		case to == CatalogRemoved:
			action = ActionCatalogRemove
		}
		if action != "" {
			if err := tx.Model(&catalogRow{}).Where("url = ?", r.URL).Updates(upd).Error; err != nil {
				return err
			}
			detail := map[string]any{"catalogId": r.ID, "catalog": r.URL, "from": from}
			if action == ActionCatalogRemove {
				detail["agentsKept"] = agents
			}
			if err := s.addAudit(tx, p, action, "", "", detail, s.now()); err != nil {
				return err
			}
			url := r.URL
			r = catalogRow{} // a NULL does not clear a field gorm scans into
			if err := tx.Where("url = ?", url).Take(&r).Error; err != nil {
				return err
			}
		}
		out = catalogOf(r)
		out.Agents = int(agents)
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	return &out, nil
}
