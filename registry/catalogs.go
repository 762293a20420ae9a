package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/cardurl"
)

// catalogRow is one crawled AI Catalog (migrations 00060).
type catalogRow struct {
	URL           string `gorm:"primaryKey;column:url"`
	Domain        string
	ETag          string `gorm:"column:etag"`
	NextCrawlAt   time.Time
	LastCrawledAt *time.Time
	LastError     string
	Trace         string
	CreatedAt     time.Time `gorm:"autoCreateTime:false"`
}

func (catalogRow) TableName() string { return "catalogs" }

// Catalog is a crawled catalog and the trace of its last crawl.
type Catalog struct {
	URL           string          `json:"url"`
	Domain        string          `json:"domain"`
	NextCrawlAt   time.Time       `json:"nextCrawlAt"`
	LastCrawledAt *time.Time      `json:"lastCrawledAt"`
	LastError     string          `json:"lastError,omitempty"`
	Trace         json.RawMessage `json:"trace"`
	ETag          string          `json:"-"`
}

// hostCatalogURL is the well-known catalog on the origin of a card URL.
func hostCatalogURL(cardURL string) string {
	u, err := url.Parse(cardURL)
	if err != nil {
		return ""
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = aicatalog.WellKnownPath, "", "", ""
	return u.String()
}

// addCatalog registers a catalog URL to crawl (once; a known URL is left
// as it is). Its registrable domain is the crawler's to decide; the first
// crawl records it.
func addCatalog(tx *gorm.DB, url string, now time.Time) error {
	return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&catalogRow{URL: url, NextCrawlAt: now,
		Trace: "{}", CreatedAt: now}).Error
}

// DueCatalogs returns up to limit catalogs due for a crawl and moves their
// next crawl to now+lease, so another replica does not crawl them at the
// same time.
func (s *Service) DueCatalogs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Catalog, error) {
	var out []Catalog
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		var rows []catalogRow
		if err := tx.Where("next_crawl_at <= ?", now).Order("next_crawl_at").Limit(limit).Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			res := tx.Model(&catalogRow{}).Where("url = ? AND next_crawl_at = ?", r.URL, r.NextCrawlAt).
				Update("next_crawl_at", now.Add(lease))
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 1 {
				out = append(out, catalogOf(r))
			}
		}
		return nil
	})
	return out, translate(err)
}

func catalogOf(r catalogRow) Catalog {
	return Catalog{URL: r.URL, Domain: r.Domain, NextCrawlAt: r.NextCrawlAt.UTC(), LastCrawledAt: utcPtr(r.LastCrawledAt),
		LastError: r.LastError, Trace: json.RawMessage(r.Trace), ETag: r.ETag}
}

// CatalogCrawl is what the crawler reports for one catalog.
type CatalogCrawl struct {
	URL         string
	Domain      string // the registrable domain the crawl held entries to
	NotModified bool
	ETag        string
	Error       string          // "" on success
	Trace       json.RawMessage // the crawl's trace (documents and entries)
	Agents      []string        // card URLs to register, on the catalog's registrable domain
	NextCrawlAt time.Time
}

// RecordCatalog stores a crawl and registers its agents: each card URL
// not yet known becomes a pending public agent that remembers the catalog,
// curated like any other submission. Known URLs are left alone. It returns
// the ids of the agents it registered.
func (s *Service) RecordCatalog(ctx context.Context, c CatalogCrawl) ([]string, error) {
	now := s.now()
	upd := map[string]any{"next_crawl_at": c.NextCrawlAt, "last_crawled_at": now, "last_error": c.Error}
	if c.Domain != "" {
		upd["domain"] = c.Domain
	}
	if !c.NotModified && c.Error == "" {
		upd["etag"] = c.ETag
		upd["trace"] = string(c.Trace)
	}
	var ids []string
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		if err := tx.Model(&catalogRow{}).Where("url = ?", c.URL).Updates(upd).Error; err != nil {
			return err
		}
		for _, raw := range c.Agents {
			cu, err := cardurl.Normalize(raw, s.cfg.URLPolicy)
			if err != nil {
				continue // the trace lists it; the URL policy refuses it here as it would a submission
			}
			if err := existing(tx, cu.URL); err != nil {
				var dup *DuplicateError
				if errors.As(err, &dup) || errors.Is(err, ErrAgentRemoved) {
					continue
				}
				return err
			}
			row := agentRow{ID: newID(), CardURL: cu.URL, Host: cu.Host, BareHost: cu.BareHost, CatalogURL: c.URL,
				Status: string(StatusPending), Visibility: string(VisibilityPublic), Health: string(HealthUnknown),
				Trust: string(TrustUnknown), NextFetchAt: now, VerifiedThumbprints: "[]", CreatedAt: now, UpdatedAt: now}
			if err := tx.Create(&row).Error; err != nil {
				return err
			}
			if err := s.addAudit(tx, Principal{Name: "catalog"}, "submit", row.ID, "",
				map[string]any{"cardUrl": cu.URL, "visibility": VisibilityPublic, "catalog": c.URL}, now); err != nil {
				return err
			}
			if err := s.addChange(tx, row.ID, ChangeSubmitted, now); err != nil {
				return err
			}
			ids = append(ids, row.ID)
		}
		return nil
	})
	return ids, translate(err)
}

// Catalogs lists the crawled catalogs (admins).
func (s *Service) Catalogs(ctx context.Context, p Principal) ([]Catalog, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	var rows []catalogRow
	if err := s.store.read(ctx).Order("url").Limit(1000).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Catalog, 0, len(rows))
	for _, r := range rows {
		out = append(out, catalogOf(r))
	}
	return out, nil
}
