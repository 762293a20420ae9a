package registry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/cardurl"
)

// CatalogCrawler crawls one catalog and its nested ones under the
// crawler's network policy and limits (crawler.CatalogCrawler).
type CatalogCrawler interface {
	Crawl(ctx context.Context, url, etag string) CatalogCrawl
}

// ErrCatalogFailed is the sentinel of every *CatalogError.
var ErrCatalogFailed = errors.New("catalog failed")

// ErrCatalogsUnavailable: the server was built without a catalog crawler.
var ErrCatalogsUnavailable = errors.New("catalog submissions are not configured on this server")

// Reasons of a CatalogError.
const (
	CatalogNotACatalog = "not-a-catalog" // fetched, but not a valid AI Catalog
	CatalogFetchFailed = "fetch-failed"  // not fetched: network, status, limits
)

// CatalogError says why a submitted catalog was not registered. ErrorClass
// is the crawler's class of the failure (docs/security.md "Network
// policy"), or not_a_catalog.
type CatalogError struct {
	Reason     string
	ErrorClass string
	Detail     string
}

func (e *CatalogError) Error() string { return "catalog failed: " + e.Reason + ": " + e.Detail }

// Is makes errors.Is(err, ErrCatalogFailed) true.
func (e *CatalogError) Is(target error) bool { return target == ErrCatalogFailed }

// CatalogSubmission is the answer to a catalog submitted directly.
type CatalogSubmission struct {
	Catalog string `json:"catalog"` // the catalog URL, as registered
	Domain  string `json:"domain"`  // the registrable domain its entries must be on
	// Registered is how many agents this crawl registered (pending);
	// Agents are the first SubmissionAgents of them. Agents the catalog
	// lists that were known already are in Entries only.
	Registered int     `json:"registered"`
	Agents     []Agent `json:"agents"`
	// Withheld is how many new entries this crawl did not register: a
	// cap or a budget ran out (their trace entries say which).
	Withheld int `json:"withheld"`
	// Known: the catalog was registered already. Nothing was fetched or
	// registered; the answer is its last crawl's trace, and its schedule
	// crawls it again (docs/threats.md K.97).
	Known bool `json:"known"`
	// Entries is the crawl's trace: what Cardex made of each entry.
	Entries json.RawMessage `json:"entries"`
}

// CatalogBudget is what a catalog submission spends (docs/security.md
// "Rate limits"); nil members spend nothing (an admin's submission).
type CatalogBudget struct {
	// Admit is asked before a new catalog is fetched; an error refuses the
	// submission and is returned as it is.
	Admit func() error
	// Spend is CatalogCrawl.Spend for the submission's crawl.
	Spend func(n int) (granted int, why string)
}

// SubmissionAgents is how many of the agents a submitted catalog
// registered its answer shows as records; the others are in the catalog's
// trace and in the review queue.
const SubmissionAgents = 100

// SubmitCatalog registers an AI Catalog by its URL and crawls it at once
// (docs/discovery.md "Submitting a catalog"): a bare host or its root means
// its well-known catalog. The URL goes through the card-URL rule (reserved
// addresses refused before anything is resolved), then through the
// crawler's network policy: the catalog must be fetched and be a valid
// catalog, or nothing is stored and the answer is a *CatalogError (a
// refused address, redirect included, is a *URLError of code reserved).
// A registered catalog is re-crawled on the crawler's schedule; submitting
// a known one is idempotent: it answers with the catalog as its last crawl
// left it (Known), fetches nothing, registers nothing and spends nothing.
// A new one spends b: Admit before the fetch, then Spend for its agents.
// Its A2A entries become pending agents as in a scheduled crawl
// (RecordCatalog). A publisher token submits only catalogs on its own
// hosts.
func (s *Service) SubmitCatalog(ctx context.Context, p Principal, rawURL string, b CatalogBudget) (*CatalogSubmission, error) {
	cu, err := cardurl.Normalize(rawURL, s.cfg.URLPolicy)
	if err != nil {
		return nil, err
	}
	if p.Role == RolePublisher && !p.owns(cu.Host, cu.URL) {
		return nil, ErrForbidden
	}
	if s.cfg.CatalogCrawler == nil {
		return nil, ErrCatalogsUnavailable
	}
	u := cu.URL
	if cu.BareHost {
		u = hostCatalogURL(cu.URL)
	}
	var known catalogRow
	err = s.store.read(ctx).Where("url = ?", u).Take(&known).Error
	switch {
	case err == nil:
		out := &CatalogSubmission{Catalog: u, Domain: known.Domain, Agents: []Agent{}, Known: true}
		out.Entries = traceEntries(json.RawMessage(known.Trace))
		return out, nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, translate(err)
	}
	if b.Admit != nil {
		if err := b.Admit(); err != nil {
			return nil, err
		}
	}
	rec := s.cfg.CatalogCrawler.Crawl(ctx, u, "")
	rec.Spend = b.Spend
	if rec.Error != "" {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, catalogFailure(p, rec)
	}
	now := s.now()
	if err := s.store.tx(ctx, func(tx *gorm.DB) error { return addCatalog(tx, u, now) }); err != nil {
		return nil, translate(err)
	}
	rec.NextCrawlAt = now.Add(s.cfg.CatalogInterval)
	done, err := s.RecordCatalog(ctx, rec)
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "catalog submitted", "url", u, "agents", len(done.Registered), "actor", actorName(p))
	out := &CatalogSubmission{Catalog: u, Domain: rec.Domain, Agents: []Agent{}, Entries: traceEntries(done.Trace)}
	out.Registered, out.Withheld = len(done.Registered), done.Withheld
	for _, id := range done.Registered[:min(len(done.Registered), SubmissionAgents)] {
		a, err := s.Get(ctx, p, id)
		if err != nil {
			return nil, err
		}
		out.Agents = append(out.Agents, *a)
	}
	return out, nil
}

// traceEntries are the entries of a stored trace, [] when it has none.
func traceEntries(trace json.RawMessage) json.RawMessage {
	var t struct {
		Entries json.RawMessage `json:"entries"`
	}
	if json.Unmarshal(trace, &t) == nil && len(t.Entries) > 0 && string(t.Entries) != "null" {
		return t.Entries
	}
	return json.RawMessage("[]")
}

// catalogFailure words a failed crawl of a submitted catalog: a refused
// address is the reserved-address answer a card URL gets; other failures
// say their class (admins also see the network layer's words, which can
// name internal addresses).
func catalogFailure(p Principal, rec CatalogCrawl) error {
	switch rec.ErrorClass {
	case "blocked_address":
		reason := "the catalog URL, or a redirect it answered with, leads to an address this registry does not fetch from"
		if p.isAdmin() {
			reason += ": " + rec.Error
		}
		return &URLError{Code: URLCodeReserved, Reason: reason}
	case ErrorClassNotACatalog:
		// The document's own faults (which member is missing, that it is
		// an agent card): nothing of the network layer.
		detail := rec.Error
		if i := strings.Index(detail, aicatalog.ErrInvalid.Error()); i >= 0 {
			detail = detail[i:]
		}
		return &CatalogError{Reason: CatalogNotACatalog, ErrorClass: rec.ErrorClass, Detail: detail}
	}
	detail := genericMessage(rec.ErrorClass)
	if p.isAdmin() {
		detail = rec.Error
	}
	return &CatalogError{Reason: CatalogFetchFailed, ErrorClass: rec.ErrorClass, Detail: detail}
}
