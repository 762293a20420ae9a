package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/cardurl"
)

// catalogRow is one crawled AI Catalog (migrations 00060, 00180).
type catalogRow struct {
	URL                 string `gorm:"primaryKey;column:url"`
	ID                  string `gorm:"column:id"`
	Domain              string
	Status              string
	Health              string
	ConsecutiveFailures int
	ConsecutiveMissing  int
	FailingSince        *time.Time
	ETag                string `gorm:"column:etag"`
	NextCrawlAt         time.Time
	LastCrawledAt       *time.Time
	LastError           string
	Trace               string
	CreatedAt           time.Time `gorm:"autoCreateTime:false"`
}

func (catalogRow) TableName() string { return "catalogs" }

// Catalog is a crawled catalog and the trace of its last crawl.
type Catalog struct {
	ID     string        `json:"id"`
	URL    string        `json:"url"`
	Domain string        `json:"domain"`
	Status CatalogStatus `json:"status"`
	// Health follows the agents' failure rule over the catalog's crawls
	// (goneAfter): failing after a failed crawl, gone after
	// goneAfterMissing consecutive 404/410 answers or failing for
	// ServiceConfig.GoneAfter. A gone catalog is not crawled until resumed.
	Health              Health     `json:"health"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	FailingSince        *time.Time `json:"failingSince"`
	// Agents is how many agents the catalog brought (removed ones
	// included); Catalogs and the lifecycle changes fill it.
	Agents        int             `json:"agents"`
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
	return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&catalogRow{URL: url, ID: newID(), NextCrawlAt: now,
		Status: string(CatalogActive), Health: string(HealthUnknown), Trace: "{}", CreatedAt: now}).Error
}

// DueCatalogs returns up to limit catalogs due for a crawl and moves their
// next crawl to now+lease, so another replica does not crawl them at the
// same time. Only active catalogs that are not gone are ever due
// (docs/discovery.md "A catalog's lifecycle").
func (s *Service) DueCatalogs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Catalog, error) {
	var out []Catalog
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		var rows []catalogRow
		if err := tx.Where("next_crawl_at <= ? AND status = ? AND health <> ?", now, CatalogActive, HealthGone).Order("next_crawl_at").Limit(limit).Find(&rows).Error; err != nil {
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
	return Catalog{ID: r.ID, URL: r.URL, Domain: r.Domain, Status: CatalogStatus(r.Status), Health: Health(r.Health),
		ConsecutiveFailures: r.ConsecutiveFailures, FailingSince: utcPtr(r.FailingSince), NextCrawlAt: r.NextCrawlAt.UTC(), LastCrawledAt: utcPtr(r.LastCrawledAt),
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
	// HTTPStatus is the status a failed root document answered with, 0
	// when none: 404 and 410 count as missing (goneAfterMissing).
	HTTPStatus int
	Trace      json.RawMessage // the crawl's trace (documents and entries)
	Agents     []CatalogAgent  // A2A entries to register, on the catalog's registrable domain
	// Complete: every document of the crawl was read and parsed and no
	// entry was left unread, so an agent of this catalog it does not list
	// is no longer listed. A failed or cut-short crawl withdraws nothing.
	Complete    bool
	NextCrawlAt time.Time
	// Spend takes up to n units of the budgets registering agents spends,
	// one per agent about to be registered, and returns how many it
	// granted and, when fewer, why (docs/security.md "Rate limits"); nil
	// spends nothing.
	Spend func(n int) (granted int, why string)
}

// CatalogWithheld is the outcome of a trace entry whose agent this crawl
// did not register: a cap (ServiceConfig.CatalogMaxNew, CatalogMaxAgents)
// or a budget ran out, as its message says. A later crawl registers it
// when the bounds allow.
const CatalogWithheld = "withheld"

// Defaults of ServiceConfig.CatalogMaxNew and CatalogMaxAgents
// (docs/configuration.md "--catalog-max-new", "--catalog-max-agents").
const (
	DefaultCatalogMaxNew    = 100
	DefaultCatalogMaxAgents = 1000
)

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
	// Document is the document that listed the entry (the root or a
	// nested one); "" is the catalog's URL.
	Document string
	// Publisher is the entry's publisher as the document names it, nil
	// when it names none: never inferred from a URL.
	Publisher *CatalogPublisher
	// URN is the entry's identifier folded to urn:air: when it is the
	// publisher's own (its publisher segment on the document's registrable
	// domain), "" otherwise: the name Cardex keeps and answers by
	// (docs/discovery.md "Identifiers").
	URN string
}

// source is the provenance stored for a (catalog_source), as JSON.
func (a CatalogAgent) source(catalog string) *string {
	doc := a.Document
	if doc == "" {
		doc = catalog
	}
	b, _ := json.Marshal(CatalogSource{Document: doc, Identifier: a.Identifier, Publisher: a.Publisher})
	s := string(b)
	return &s
}

// urn is the stored lookup key (catalog_identifier), nil without one.
func (a CatalogAgent) urn() *string {
	if a.URN == "" {
		return nil
	}
	u := a.URN
	return &u
}

// CatalogRecord is what recording a catalog crawl did.
type CatalogRecord struct {
	Registered []string // ids of the agents it registered
	Missing    []string // ids of its agents it no longer lists (now missing)
	Listed     []string // ids of its agents listed again after being missing
	Withheld   int      // new entries not registered: a cap or a budget ran out
	// Trace is the crawl's trace as stored: the crawler's, with withheld
	// entries marked (CatalogWithheld).
	Trace json.RawMessage
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
const ownCols = "id, card_url, status, catalog_url, catalog_card, catalog_missing, catalog_queries, catalog_source, catalog_identifier"

// ownRow is what RecordCatalog reads of the agents a catalog brought.
type ownRow struct {
	ID             string
	CardURL        string
	Status         string
	CatalogURL     string
	CatalogCard    []byte
	CatalogMissing bool
	CatalogQueries *string
	CatalogSource  *string
	// CatalogIdentifier is the stored urn:air key (migrations 00210).
	CatalogIdentifier *string
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
//     marked missing and crawled at once: its card is fetched from its own
//     URL and only a failing fetch counts, so leaving a catalog never
//     fails an agent whose card still loads; an inline agent, whose only
//     source is the catalog, is recorded as missing, the way a card that
//     answers 404 is, and goes failing and then gone by the one rule of
//     recordFailure; an entry listed again clears the mark.
//
// A catalog speaks for its own origin only: an entry whose card URL is on
// another origin (scheme, host, port) registers nothing and takes nothing
// over (docs/threats.md K.102). New agents are bounded per crawl
// (CatalogMaxNew), per catalog in all (CatalogMaxAgents) and by c.Spend,
// one unit per agent (docs/threats.md K.97); the entries past a bound are
// marked withheld in the stored trace and wait for a later crawl.
//
// A failed crawl or a 304 changes no agent: a catalog that cannot be read
// withdraws nothing. The crawl's outcome sets the catalog's health by the
// agents' failure rule (goneAfter). A crawl that ends after the catalog
// was paused or removed is not recorded: such a catalog registers,
// withdraws and describes nothing.
func (s *Service) RecordCatalog(ctx context.Context, c CatalogCrawl) (CatalogRecord, error) {
	now := s.now()
	read := !c.NotModified && c.Error == ""
	origin := cardurl.Origin(c.URL)
	var out CatalogRecord
	spent := 0 // units c.Spend granted: a retried transaction spends them again only past this
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		out = CatalogRecord{}
		var cat catalogRow
		if err := tx.Where("url = ?", c.URL).Take(&cat).Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if st := CatalogStatus(cat.Status); st == CatalogPaused || st == CatalogRemoved {
			return nil
		}
		upd := map[string]any{"next_crawl_at": c.NextCrawlAt, "last_crawled_at": now, "last_error": c.Error}
		if c.Domain != "" {
			upd["domain"] = c.Domain
		}
		if read {
			upd["etag"] = c.ETag
		}
		s.catalogHealth(&cat, c, now, upd)
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
		var entries []freshEntry
		var unknown []string
		for _, a := range c.Agents {
			cardURL, host, bare, ok := s.identity(a)
			if !ok || listed[cardURL] || cardurl.Origin(cardURL) != origin {
				// The trace lists it; the URL policy refuses it here as it
				// would a submission, and another origin's agent is not
				// this catalog's to register, take over or describe.
				continue
			}
			listed[cardURL] = true
			entries = append(entries, freshEntry{cardURL, host, bare, a})
			if _, ok := mine[cardURL]; !ok {
				unknown = append(unknown, cardURL)
			}
		}
		others, err := agentsByCardURL(tx, unknown)
		if err != nil {
			return err
		}
		var fresh []freshEntry
		for _, e := range entries {
			cardURL, a := e.cardURL, e.a
			r, ok := mine[cardURL]
			if !ok {
				other, known := others[cardURL]
				switch {
				case !known:
					fresh = append(fresh, e)
					continue
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
			if src, key := a.source(c.URL), a.urn(); !equalPtr(src, r.CatalogSource) || !equalPtr(key, r.CatalogIdentifier) {
				// Where the entry is listed, or its identifier or
				// publisher, changed: the provenance follows the listing.
				if err := tx.Model(&agentRow{}).Where("id = ?", r.ID).
					Updates(map[string]any{"catalog_source": src, "catalog_identifier": key}).Error; err != nil {
					return err
				}
			}
		}
		withheld, err := s.registerFresh(tx, c, fresh, len(own), &spent, &out, now)
		if err != nil {
			return err
		}
		out.Trace = markWithheld(c.Trace, withheld)
		if err := tx.Model(&catalogRow{}).Where("url = ?", c.URL).Update("trace", string(out.Trace)).Error; err != nil {
			return err
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

// agentsByCardURL reads the agents with these card URLs, a bounded IN
// list at a time: a catalog of thousands of entries costs a few queries,
// not one per entry.
func agentsByCardURL(tx *gorm.DB, urls []string) (map[string]ownRow, error) {
	out := make(map[string]ownRow, len(urls))
	for chunk := range slices.Chunk(urls, 500) {
		var rows []ownRow
		if err := tx.Model(&agentRow{}).Select(ownCols).Where("card_url IN ?", chunk).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.CardURL] = r
		}
	}
	return out, nil
}

// freshEntry is an agent entry of a crawl with the identity it registers
// under.
type freshEntry struct {
	cardURL, host string
	bare          bool
	a             CatalogAgent
}

// registerFresh registers the crawl's new agents in listing order, as many
// as the bounds allow: CatalogMaxNew per crawl, CatalogMaxAgents for the
// catalog in all (owned: the agents it brought so far, removed ones
// included), then c.Spend, one unit per agent. It returns why each entry
// past a bound was withheld, by the entry's agent as the trace names it.
// *spent carries what c.Spend granted over a retried transaction.
func (s *Service) registerFresh(tx *gorm.DB, c CatalogCrawl, fresh []freshEntry, owned int, spent *int, out *CatalogRecord, now time.Time) (map[string]string, error) {
	if len(fresh) == 0 {
		return nil, nil
	}
	allowed, capWhy := len(fresh), ""
	if n := s.cfg.CatalogMaxNew; n < allowed {
		allowed, capWhy = n, fmt.Sprintf("this crawl registered the %d new agents a catalog may register per crawl; a later crawl registers more", n)
	}
	if n := max(0, s.cfg.CatalogMaxAgents-owned); n < allowed {
		allowed, capWhy = n, fmt.Sprintf("the catalog has registered the %d agents a catalog may register in all", s.cfg.CatalogMaxAgents)
	}
	granted, budgetWhy := allowed, ""
	if c.Spend != nil && allowed > *spent {
		got, why := c.Spend(allowed - *spent)
		*spent += got
		if *spent < allowed {
			budgetWhy = "the submission budget is spent (" + why + "); a later crawl registers more"
		}
	}
	if c.Spend != nil {
		granted = min(allowed, *spent)
	}
	withheld := map[string]string{}
	for i, f := range fresh {
		switch {
		case i < granted:
			id, err := s.registerFromCatalog(tx, c.URL, f.cardURL, f.host, f.bare, f.a, now)
			if err != nil {
				return nil, err
			}
			out.Registered = append(out.Registered, id)
			continue
		case i < allowed:
			withheld[f.a.traceName()] = budgetWhy
		default:
			withheld[f.a.traceName()] = capWhy
		}
		out.Withheld++
	}
	return withheld, nil
}

// traceName is how the crawl's trace names the entry's agent: its URL as
// listed, or for an inline entry aicatalog.InlineURL of its document.
func (a CatalogAgent) traceName() string {
	if a.Card != nil {
		return aicatalog.InlineURL(a.URL, a.Identifier)
	}
	return a.URL
}

// traceEntry is an entry of the crawler's trace (crawler.CatalogEntry),
// member for member, so a withheld one is rewritten in the same order.
type traceEntry struct {
	Catalog    string `json:"catalog"`
	Index      int    `json:"index"`
	Identifier string `json:"identifier,omitempty"`
	Type       string `json:"type,omitempty"`
	URL        string `json:"url,omitempty"`
	Outcome    string `json:"outcome"`
	Message    string `json:"message,omitempty"`
	Agent      string `json:"agent,omitempty"`
}

// markWithheld rewrites the entries of trace whose agent was withheld:
// outcome CatalogWithheld, the reason as message. Other members are kept
// as the crawler wrote them.
func markWithheld(trace json.RawMessage, withheld map[string]string) json.RawMessage {
	if len(withheld) == 0 {
		return trace
	}
	var doc map[string]json.RawMessage
	var entries []json.RawMessage
	if json.Unmarshal(trace, &doc) != nil || json.Unmarshal(doc["entries"], &entries) != nil {
		return trace
	}
	for i, raw := range entries {
		var e traceEntry
		if json.Unmarshal(raw, &e) != nil || e.Agent == "" {
			continue
		}
		why, ok := withheld[e.Agent]
		if !ok || (e.Outcome != "agent" && e.Outcome != "inline") {
			continue
		}
		e.Outcome, e.Message = CatalogWithheld, why
		entries[i], _ = json.Marshal(e)
	}
	doc["entries"], _ = json.Marshal(entries)
	out, err := json.Marshal(doc)
	if err != nil {
		return trace
	}
	return out
}

// registerFromCatalog adds a pending public agent a catalog lists.
func (s *Service) registerFromCatalog(tx *gorm.DB, catalog, cardURL, host string, bare bool, a CatalogAgent, now time.Time) (string, error) {
	row := agentRow{ID: newID(), CardURL: cardURL, Host: host, BareHost: bare, CatalogURL: catalog, CatalogCard: a.Card,
		CatalogQueries: encodeQueries(a.Queries), CatalogSource: a.source(catalog), CatalogIdentifier: a.urn(), Status: string(StatusPending), Visibility: string(VisibilityPublic),
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
	var counts []struct {
		CatalogURL string
		N          int
	}
	if err := s.store.read(ctx).Model(&agentRow{}).Select("catalog_url, COUNT(*) AS n").
		Where("catalog_url <> ''").Group("catalog_url").Find(&counts).Error; err != nil {
		return nil, translate(err)
	}
	n := make(map[string]int, len(counts))
	for _, c := range counts {
		n[c.CatalogURL] = c.N
	}
	out := make([]Catalog, 0, len(rows))
	for _, r := range rows {
		c := catalogOf(r)
		c.Agents = n[r.URL]
		out = append(out, c)
	}
	return out, nil
}

// CatalogSource is the provenance of an agent a catalog or an ARD document
// listed (docs/discovery.md "Provenance").
type CatalogSource struct {
	// Document is the document that listed the entry.
	Document string `json:"document"`
	// Identifier is the entry's identifier exactly as written (a legacy
	// urn:ai: one included).
	Identifier string `json:"identifier"`
	// Publisher is the entry's publisher as the document names it.
	Publisher *CatalogPublisher `json:"publisher,omitempty"`
	// URN is the identifier folded to urn:air: when it is the publisher's
	// own; Cardex keeps it and answers ARD lookups by it.
	URN string `json:"urn,omitempty"`
}

// CatalogPublisher is an entry's publisher member.
type CatalogPublisher struct {
	Identifier  string `json:"identifier"`
	DisplayName string `json:"displayName"`
}

// decodeSource reads the stored provenance; nil when there is none or it
// does not read.
func decodeSource(s, urn *string) *CatalogSource {
	if s == nil {
		return nil
	}
	var src CatalogSource
	if json.Unmarshal([]byte(*s), &src) != nil {
		return nil
	}
	if urn != nil {
		src.URN = *urn
	}
	return &src
}

// AgentByIdentifier reads the agent whose catalog entry has the urn:air
// identifier urn (folded) and that p may list (CanList: a name anyone can
// guess finds what a search would, never a pending or hidden agent);
// ErrNotFound when there is none. Two catalogs may list one name: the
// agent listed first answers.
func (s *Service) AgentByIdentifier(ctx context.Context, p Principal, urn string) (*Agent, error) {
	var ids []string
	if err := s.store.read(ctx).Model(&agentRow{}).Where("catalog_identifier = ? AND status <> ?", urn, StatusRemoved).
		Order("created_at, id").Limit(8).Pluck("id", &ids).Error; err != nil {
		return nil, translate(err)
	}
	for _, id := range ids {
		a, err := s.Get(ctx, p, id)
		if errors.Is(err, ErrNotFound) || (err == nil && !CanList(p, *a)) {
			continue
		}
		return a, err
	}
	return nil, ErrNotFound
}
