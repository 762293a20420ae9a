package registry

import (
	"bytes"
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
	Error       string // "" on success
	// ErrorClass is the class of a failed root document: the crawler's
	// fetch classes, or ErrorClassNotACatalog.
	ErrorClass string
	Trace      json.RawMessage // the crawl's trace (documents and entries)
	Agents     []CatalogAgent  // A2A entries to register, on the catalog's registrable domain
	// Complete: every document of the crawl was read and parsed and no
	// entry was left unread, so an agent of this catalog it does not list
	// is no longer listed. A failed or cut-short crawl withdraws nothing.
	Complete    bool
	NextCrawlAt time.Time
}

// ErrorClassNotACatalog is the class of a catalog document that was
// fetched but is not a valid AI Catalog.
const ErrorClassNotACatalog = "not_a_catalog"

// CatalogAgent is one A2A entry of a catalog.
type CatalogAgent struct {
	// URL is the card URL of an entry with url; for an inline entry, the
	// URL of the catalog document that carries it.
	URL string
	// Identifier is the entry's identifier: an inline agent's identity
	// within its document.
	Identifier string
	// Card is an inline entry's data (the card), nil for an entry with url.
	Card []byte
	// Queries are the entry's representativeQueries, as aicatalog read
	// them (bounded), nil when none.
	Queries []string
}

// CatalogRecord is what recording a catalog crawl did.
type CatalogRecord struct {
	Registered []string // ids of the agents it registered
	Missing    []string // ids of its agents it no longer lists (now missing)
	Listed     []string // ids of its agents listed again after being missing
}

// identity is the card URL, host and bare-host flag an entry registers
// under: an entry's card URL by the card-URL rule, or for an inline entry
// its document's URL with the identifier as fragment (aicatalog.InlineURL),
// on the document's host. ok is false for a URL the rule refuses.
func (s *Service) identity(a CatalogAgent) (cardURL, host string, bare, ok bool) {
	cu, err := cardurl.Normalize(a.URL, s.cfg.URLPolicy)
	if err != nil {
		return "", "", false, false
	}
	if a.Card == nil {
		return cu.URL, cu.Host, cu.BareHost, true
	}
	if cu.BareHost || a.Identifier == "" {
		return "", "", false, false
	}
	return aicatalog.InlineURL(cu.URL, a.Identifier), cu.Host, false, true
}

// ownCols are the columns of ownRow.
const ownCols = "id, card_url, status, catalog_url, catalog_card, catalog_missing, catalog_queries"

// ownRow is what RecordCatalog reads of the agents a catalog brought.
type ownRow struct {
	ID             string
	CardURL        string
	Status         string
	CatalogURL     string
	CatalogCard    []byte
	CatalogMissing bool
	CatalogQueries *string
}

// RecordCatalog stores a crawl and applies its listing (docs/discovery.md
// "Listing several agents with one catalog"):
//
//   - each A2A entry not yet known becomes a pending public agent that
//     remembers the catalog, curated like any other submission (an inline
//     entry keeps its card in catalog_card, which the crawler reads
//     instead of fetching); agents submitted directly or brought by
//     another catalog are left alone, except that an agent its own catalog
//     no longer lists is taken over by a catalog that lists it;
//   - an agent of this catalog whose inline card changed gets the new
//     bytes and is crawled at once (the catalog's conditional fetch is its
//     re-crawl);
//   - an agent of this catalog whose entry's representativeQueries
//     changed gets the new ones (catalog_queries) and a change-log entry,
//     so the search index reads them again;
//   - after a Complete crawl, an agent of this catalog it does not list is
//     marked missing and crawled at once: the crawler records it as
//     missing, the way a card that answers 404 is recorded, so it goes
//     failing and then gone by the one rule of recordFailure; an entry
//     listed again clears the mark and its next crawl recovers it.
//
// A failed crawl or a 304 changes no agent: a catalog that cannot be read
// withdraws nothing.
func (s *Service) RecordCatalog(ctx context.Context, c CatalogCrawl) (CatalogRecord, error) {
	now := s.now()
	upd := map[string]any{"next_crawl_at": c.NextCrawlAt, "last_crawled_at": now, "last_error": c.Error}
	if c.Domain != "" {
		upd["domain"] = c.Domain
	}
	read := !c.NotModified && c.Error == ""
	if read {
		upd["etag"] = c.ETag
		upd["trace"] = string(c.Trace)
	}
	var out CatalogRecord
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		out = CatalogRecord{}
		if err := tx.Model(&catalogRow{}).Where("url = ?", c.URL).Updates(upd).Error; err != nil {
			return err
		}
		if !read {
			return nil
		}
		var own []ownRow
		if err := tx.Model(&agentRow{}).Select(ownCols).
			Where("catalog_url = ?", c.URL).Find(&own).Error; err != nil {
			return err
		}
		mine := make(map[string]ownRow, len(own))
		for _, r := range own {
			mine[r.CardURL] = r
		}
		listed := map[string]bool{}
		for _, a := range c.Agents {
			cardURL, host, bare, ok := s.identity(a)
			if !ok || listed[cardURL] {
				continue // the trace lists it; the URL policy refuses it here as it would a submission
			}
			listed[cardURL] = true
			r, ok := mine[cardURL]
			if !ok {
				var other ownRow
				err := tx.Model(&agentRow{}).Select(ownCols).
					Where("card_url = ?", cardURL).Take(&other).Error
				switch {
				case errors.Is(err, gorm.ErrRecordNotFound):
					id, err := s.registerFromCatalog(tx, c.URL, cardURL, host, bare, a, now)
					if err != nil {
						return err
					}
					out.Registered = append(out.Registered, id)
					continue
				case err != nil:
					return err
				case other.CatalogURL == "" || !other.CatalogMissing || Status(other.Status) == StatusRemoved:
					continue // submitted directly, or listed by the catalog that brought it
				}
				// Its catalog dropped it and this one lists it: this one
				// keeps it listed from now on.
				r = other
				if err := tx.Model(&agentRow{}).Where("id = ?", r.ID).Update("catalog_url", c.URL).Error; err != nil {
					return err
				}
			}
			cols := map[string]any{}
			if r.CatalogMissing {
				cols["catalog_missing"] = false
				out.Listed = append(out.Listed, r.ID)
			}
			if a.Card != nil && !bytes.Equal(a.Card, r.CatalogCard) {
				cols["catalog_card"] = a.Card
			}
			if len(cols) > 0 {
				cols["next_fetch_at"] = now
				if err := tx.Model(&agentRow{}).Where("id = ?", r.ID).Updates(cols).Error; err != nil {
					return err
				}
			}
			if q := encodeQueries(a.Queries); !equalPtr(q, r.CatalogQueries) {
				// Searchable text of the agent changed: the change log
				// brings it to the search index; no fetch is needed.
				if err := tx.Model(&agentRow{}).Where("id = ?", r.ID).
					Updates(map[string]any{"catalog_queries": q, "updated_at": now}).Error; err != nil {
					return err
				}
				if err := s.addListedChange(tx, r.ID, ChangeChanged, now); err != nil {
					return err
				}
			}
		}
		if !c.Complete {
			return nil
		}
		for _, r := range own {
			if listed[r.CardURL] || r.CatalogMissing {
				continue
			}
			if err := tx.Model(&agentRow{}).Where("id = ?", r.ID).
				Updates(map[string]any{"catalog_missing": true, "next_fetch_at": now}).Error; err != nil {
				return err
			}
			out.Missing = append(out.Missing, r.ID)
		}
		return nil
	})
	if err != nil {
		return CatalogRecord{}, translate(err)
	}
	return out, nil
}

// registerFromCatalog adds a pending public agent a catalog lists.
func (s *Service) registerFromCatalog(tx *gorm.DB, catalog, cardURL, host string, bare bool, a CatalogAgent, now time.Time) (string, error) {
	row := agentRow{ID: newID(), CardURL: cardURL, Host: host, BareHost: bare, CatalogURL: catalog, CatalogCard: a.Card,
		CatalogQueries: encodeQueries(a.Queries), Status: string(StatusPending), Visibility: string(VisibilityPublic),
		Health: string(HealthUnknown), Trust: string(TrustUnknown), NextFetchAt: now, VerifiedThumbprints: "[]",
		CreatedAt: now, UpdatedAt: now}
	if err := tx.Create(&row).Error; err != nil {
		return "", err
	}
	detail := map[string]any{"cardUrl": cardURL, "visibility": VisibilityPublic, "catalog": catalog}
	if a.Card != nil {
		detail["inline"] = true
	}
	if err := s.addAudit(tx, Principal{Name: "catalog"}, "submit", row.ID, "", detail, now); err != nil {
		return "", err
	}
	return row.ID, s.addChange(tx, nil, &row, ChangeSubmitted, now)
}

// encodeQueries is the stored form of an entry's representativeQueries:
// a JSON array, nil when there are none.
func encodeQueries(qs []string) *string {
	if len(qs) == 0 {
		return nil
	}
	b, _ := json.Marshal(qs)
	s := string(b)
	return &s
}

// decodeQueries reads encodeQueries' form; a value that is not a JSON
// array of strings reads as none.
func decodeQueries(s *string) []string {
	if s == nil {
		return nil
	}
	var qs []string
	if json.Unmarshal([]byte(*s), &qs) != nil || len(qs) == 0 {
		return nil
	}
	return qs
}

func equalPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

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
