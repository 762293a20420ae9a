package crawler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// Outcomes of a catalog entry in a crawl's trace (docs/discovery.md "Listing
// several agents with one catalog").
const (
	CatalogAgent     = "agent"      // an A2A card URL on the catalog's own origin
	CatalogInline    = "inline"     // a valid A2A card given inline, its endpoints on the catalog's registrable domain
	CatalogOffDomain = "off-domain" // on another registrable domain: refused
	CatalogOffOrigin = "off-origin" // on the catalog's registrable domain but another origin (scheme, host, port): refused
	// CatalogWithheld is set by the registry (registry.CatalogWithheld):
	// an agent entry not registered by this crawl, for the reason given.
	CatalogWithheld    = registry.CatalogWithheld
	CatalogUnsupported = "unsupported-type" // not an A2A card nor a catalog
	CatalogInvalid     = "invalid"          // not a valid entry
	CatalogNested      = "nested"           // a nested catalog, followed
	CatalogNotFollowed = "not-followed"     // a nested catalog past the limits, or seen before
)

// MaxCatalogEntries bounds the entries one crawl reads over every nested
// document together (docs/threats.md I.82): past it the crawl stops reading.
const MaxCatalogEntries = 5000

// MaxCatalogDocuments bounds the documents one crawl fetches, the root
// included: a catalog of nested catalogs one entry each would otherwise
// cost a request per entry.
const MaxCatalogDocuments = 32

// CatalogEntry is one entry of a crawl's trace: which document listed it
// and what Cardex makes of it.
type CatalogEntry struct {
	Catalog    string `json:"catalog"` // the document that listed it
	Index      int    `json:"index"`
	Identifier string `json:"identifier,omitempty"`
	Type       string `json:"type,omitempty"`
	URL        string `json:"url,omitempty"`
	Outcome    string `json:"outcome"`
	Message    string `json:"message,omitempty"`
	// Agent is the card URL an agent or inline entry is registered under
	// (for an inline entry, aicatalog.InlineURL of its document).
	Agent string `json:"agent,omitempty"`
}

// CatalogDocument is one document a crawl fetched, or failed to.
type CatalogDocument struct {
	URL         string `json:"url"`
	Depth       int    `json:"depth"`
	NotModified bool   `json:"notModified,omitempty"`
	ETag        string `json:"etag,omitempty"`
	Entries     int    `json:"entries"`
	Error       string `json:"error,omitempty"`
}

// CatalogCrawl is the trace of one crawl of a catalog and its nested ones.
type CatalogCrawl struct {
	Domain    string            `json:"domain"` // the registrable domain inline cards' endpoints must be on
	Origin    string            `json:"origin"` // the origin card URLs and nested catalogs must be on
	Documents []CatalogDocument `json:"documents"`
	Entries   []CatalogEntry    `json:"entries"`
	// Superseded is the host's ARD document when it was not there and
	// its AI Catalog was read instead (docs/discovery.md "Resolving a
	// host"); Documents then start with the AI Catalog.
	Superseded *CatalogDocument `json:"superseded,omitempty"`
	// Truncated: the crawl stopped reading at MaxCatalogEntries, so it
	// does not say which agents are no longer listed.
	Truncated bool `json:"truncated,omitempty"`

	agents []registry.CatalogAgent
}

// Agents are the A2A entries the crawl found for registration: card URLs
// on the catalog's origin and inline cards, in listing order.
func (c *CatalogCrawl) Agents() []registry.CatalogAgent { return c.agents }

// Complete reports whether every document was read and parsed and no entry
// was left unread: only then does the crawl say an agent is not listed.
func (c *CatalogCrawl) Complete() bool {
	if c.Truncated || len(c.Documents) == 0 {
		return false
	}
	for _, d := range c.Documents {
		if d.Error != "" || d.NotModified {
			return false
		}
	}
	return true
}

// ErrNotCatalogURL is a root URL that is not http(s).
var ErrNotCatalogURL = errors.New("crawler: not an http(s) URL")

// CatalogURL is where a host's catalog is: a bare host (or its root URL)
// means its well-known catalog; any other URL is taken as given.
func CatalogURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", ErrNotCatalogURL
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = aicatalog.WellKnownPath
	}
	u.Fragment = ""
	return u.String(), nil
}

// CrawlCatalog fetches the catalog at root and the nested catalogs it lists
// (on the same origin, up to aicatalog.MaxNesting deep, each once), every
// URL under the fetcher's network policy, and traces what each entry is.
// A catalog speaks for its own origin only (docs/threats.md K.102): a card
// URL or nested catalog on another origin, even of the same registrable
// domain (another subdomain, another port), is traced and not registered. etag makes the root fetch conditional; a 304 traces the
// root as not modified and reads nothing. Only a failure of the root
// document is an error; a failing nested one is traced.
func (f CatalogCrawler) CrawlCatalog(ctx context.Context, root, etag string) (*CatalogCrawl, error) {
	rootURL, err := CatalogURL(root)
	if err != nil {
		return nil, err
	}
	c := &CatalogCrawl{Domain: cardurl.DomainKey(rootURL)}
	// A host's well-known document, by either name, means the host: its
	// ARD document is read first and its AI Catalog only when the ARD
	// document is not there (docs/discovery.md "Resolving a host").
	var fallback string
	if p, err := url.Parse(rootURL); err == nil && p.RawQuery == "" &&
		(p.Path == aicatalog.WellKnownPath || p.Path == aicatalog.ARDWellKnownPath) {
		p.Path = aicatalog.ARDWellKnownPath
		rootURL = p.String()
		p.Path = aicatalog.WellKnownPath
		fallback = p.String()
	}
	if c.Origin, err = fetch.OriginOf(rootURL); err != nil {
		return nil, ErrNotCatalogURL
	}
	visited := map[string]bool{}
	read := 0
	var walk func(u, etag string, depth int) error
	walk = func(u, etag string, depth int) error {
		visited[u] = true
		doc := CatalogDocument{URL: u, Depth: depth}
		resp, err := f.Fetch(ctx, fetch.Request{URL: u, ETag: etag, FollowRedirects: true, SameOriginOnly: true,
			Accept: aicatalog.MediaType + ", application/ard+json, application/json"})
		if err != nil {
			doc.Error = err.Error()
			c.Documents = append(c.Documents, doc)
			return err
		}
		doc.ETag = resp.Header.Get("ETag")
		if resp.NotModified {
			doc.NotModified = true
			c.Documents = append(c.Documents, doc)
			return nil
		}
		lim := aicatalog.DefaultLimits
		lim.MaxBytes = int(f.Policy().MaxBodyBytes)
		lim.MaxEntries = min(lim.MaxEntries, MaxCatalogEntries-read)
		parsed, problems, err := aicatalog.Parse(resp.Body, lim)
		if err != nil {
			err = notACatalog(resp, err)
			doc.Error = err.Error()
			c.Documents = append(c.Documents, doc)
			return err
		}
		doc.Entries = len(parsed.Entries) + len(problems)
		read += doc.Entries
		c.Documents = append(c.Documents, doc)
		for _, p := range problems {
			c.Entries = append(c.Entries, CatalogEntry{Catalog: u, Index: p.Index, Outcome: CatalogInvalid, Message: p.Message})
		}
		i := 0
		for _, e := range parsed.Entries {
			for i < doc.Entries && hasIndex(problems, i) {
				i++
			}
			te := CatalogEntry{Catalog: u, Index: i, Identifier: e.Identifier, Type: e.Type, URL: e.URL}
			i++
			listed := registry.CatalogAgent{Identifier: e.Identifier, Queries: e.RepresentativeQueries, Document: u,
				Publisher: publisherOf(e), URN: publisherURN(e.Identifier, c.Domain)}
			switch e.Type {
			case aicatalog.TypeA2ACard:
				switch {
				case e.URL == "":
					te.Agent = aicatalog.InlineURL(u, e.Identifier)
					te.Outcome, te.Message = inlineOutcome(e.Data, te.Agent, c.Domain)
					if te.Outcome == CatalogInline {
						listed.URL, listed.Card = u, e.Data
						c.agents = append(c.agents, listed)
					}
				case !f.sameDomain(e.URL, c.Domain):
					te.Outcome = CatalogOffDomain
					te.Message = fmt.Sprintf("on %s, not %s: the host is the agent's identity, so it must be listed (or submitted) from its own domain", cardurl.DomainKey(e.URL), c.Domain)
				case !sameOrigin(e.URL, c.Origin):
					te.Outcome = CatalogOffOrigin
					te.Message = fmt.Sprintf("not on %s: a catalog lists the agents of its own origin only; another origin's agent is listed by that origin's catalog or submitted directly", c.Origin)
				default:
					te.Outcome, te.Agent = CatalogAgent, e.URL
					listed.URL = e.URL
					c.agents = append(c.agents, listed)
				}
			case aicatalog.MediaType:
				nested, err := CatalogURL(e.URL)
				switch {
				case e.URL == "" || err != nil:
					te.Outcome, te.Message = CatalogNotFollowed, "a nested catalog needs an http(s) url"
				case !f.sameDomain(nested, c.Domain):
					te.Outcome, te.Message = CatalogOffDomain, "a nested catalog on "+cardurl.DomainKey(nested)+" is not followed"
				case !sameOrigin(nested, c.Origin):
					te.Outcome, te.Message = CatalogOffOrigin, "a nested catalog not on "+c.Origin+" is not followed"
				case visited[nested]:
					te.Outcome, te.Message = CatalogNotFollowed, "already read in this crawl"
				case depth+1 >= aicatalog.MaxNesting:
					te.Outcome, te.Message = CatalogNotFollowed, fmt.Sprintf("nested deeper than %d catalogs", aicatalog.MaxNesting)
				case read >= MaxCatalogEntries:
					te.Outcome, te.Message = CatalogNotFollowed, fmt.Sprintf("the crawl already read %d entries", MaxCatalogEntries)
					c.Truncated = true
				case len(c.Documents) >= MaxCatalogDocuments:
					te.Outcome, te.Message = CatalogNotFollowed, fmt.Sprintf("the crawl already fetched %d catalogs", MaxCatalogDocuments)
					c.Truncated = true
				default:
					te.Outcome = CatalogNested
					c.Entries = append(c.Entries, te)
					walk(nested, "", depth+1) // a failing nested catalog is traced in Documents
					continue
				}
			default:
				te.Outcome, te.Message = CatalogUnsupported, "only A2A agent cards and nested catalogs are read"
			}
			c.Entries = append(c.Entries, te)
		}
		return nil
	}
	err = walk(rootURL, etag, 0)
	if err != nil && fallback != "" && absent(err) {
		// The stored validator is sent again: it came from whichever
		// document answered last time, and a host that serves one
		// document under both names answers 304 for both alike.
		c.Superseded, c.Documents = &c.Documents[0], nil
		next := fallback
		// The host's answer may name its ARD document elsewhere on its
		// origin (Link: <…>; rel="ard"): that comes before the AI
		// Catalog.
		if rel := relARD(err, rootURL); rel != "" && sameOrigin(rel, c.Origin) && !visited[rel] {
			next = rel
		}
		err = walk(next, etag, 0)
		if err != nil && next != fallback && absent(err) {
			c.Documents = nil
			err = walk(fallback, etag, 0)
		}
	}
	if err != nil {
		return c, err
	}
	return c, nil
}

// relARD is the target of a Link header with rel="ard" on the answer
// that failed with err, resolved against base ("" when there is none).
func relARD(err error, base string) string {
	var fe *fetch.FetchError
	if !errors.As(err, &fe) || fe.Header == nil {
		return ""
	}
	b, perr := url.Parse(base)
	if perr != nil {
		return ""
	}
	for _, v := range fe.Header.Values("Link") {
		for _, link := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			target = strings.TrimSpace(target)
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if !strings.EqualFold(strings.TrimSpace(k), "rel") {
					continue
				}
				for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(val), `"`)) {
					if strings.EqualFold(rel, aicatalog.ARDLinkRel) {
						u, err := b.Parse(target[1 : len(target)-1])
						if err != nil || len(u.String()) > 2048 {
							return ""
						}
						u.Fragment = ""
						return u.String()
					}
				}
			}
		}
	}
	return ""
}

// absent reports whether a failed fetch of a host's ARD document says it
// has none: not found, gone, or something that is not such a document (a
// site answering every path with its HTML page). A host that times out or
// refuses is failing, and its other document is not tried.
func absent(err error) bool {
	var fe *fetch.FetchError
	if !errors.As(err, &fe) {
		return false
	}
	switch fe.Class {
	case fetch.ClassNotJSON, ClassNotACatalog:
		return true
	case fetch.ClassHTTPStatus:
		return fe.HTTPStatus == 404 || fe.HTTPStatus == 410 || fe.HTTPStatus == 403
	}
	return false
}

// publisherOf is the entry's publisher member as written, nil when it
// names none: the publisher is never inferred from a URL.
func publisherOf(e aicatalog.Entry) *registry.CatalogPublisher {
	if e.Publisher == nil || (e.Publisher.Identifier == "" && e.Publisher.DisplayName == "") {
		return nil
	}
	return &registry.CatalogPublisher{Identifier: e.Publisher.Identifier, DisplayName: e.Publisher.DisplayName}
}

// publisherURN is id folded to urn:air: when it is the publisher's own
// name: a urn:air (or legacy urn:ai:) identifier whose publisher segment
// is on the registrable domain of the document that lists it. A catalog
// cannot name agents in another domain's namespace, so such an identifier
// is kept as provenance only (docs/discovery.md "Identifiers").
func publisherURN(id, domain string) string {
	pub := aicatalog.AIRPublisher(id)
	if pub == "" || cardurl.DomainKey(pub) != domain {
		return ""
	}
	folded, _ := aicatalog.FoldIdentifier(id)
	return folded
}

// inlineOutcome judges an inline card as a fetched one would be judged
// (the card parser's rules: a card needs a name and an A2A endpoint) and
// holds it to the catalog's registrable domain: its identity is the
// catalog's host, so every endpoint it names must be on that domain too.
func inlineOutcome(data []byte, name, domain string) (outcome, msg string) {
	p, err := agentcard.Parse(data, agentcard.Options{CardURL: name})
	if err != nil {
		return CatalogInvalid, "the inline card is not a valid agent card: " + truncate(err.Error(), 300)
	}
	for _, in := range p.Card.Interfaces {
		if d := cardurl.DomainKey(in.URL); d != domain {
			return CatalogOffDomain, fmt.Sprintf("the inline card's endpoint %s is on %s, not %s: an inline card is registered under the catalog's host, so its endpoints must be on the catalog's domain",
				truncate(in.URL, 200), d, domain)
		}
	}
	return CatalogInline, ""
}

// notACatalog classes a fetched document that is not a catalog, saying so
// when it is an agent card (submitted as a catalog by mistake).
func notACatalog(resp *fetch.Response, err error) error {
	if errors.Is(err, aicatalog.ErrTooManyEntries) {
		return &fetch.FetchError{Class: fetch.ClassTooLarge, HTTPStatus: resp.StatusCode, Hop: resp.URL, Err: err}
	}
	if _, cerr := agentcard.Parse(resp.Body, agentcard.Options{CardURL: resp.URL}); cerr == nil {
		err = fmt.Errorf("%w: it is an agent card (submit it as a card URL)", aicatalog.ErrInvalid)
	}
	return &fetch.FetchError{Class: ClassNotACatalog, HTTPStatus: resp.StatusCode, Hop: resp.URL, Err: err}
}

func hasIndex(ps []aicatalog.Problem, i int) bool {
	for _, p := range ps {
		if p.Index == i {
			return true
		}
	}
	return false
}

// sameDomain reports whether u is an http(s) URL on the registrable domain
// (the scheme the policy allows is checked again when it is fetched).
func (f CatalogCrawler) sameDomain(u, domain string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "https" && !(p.Scheme == "http" && f.Policy().AllowInsecureHTTP)) {
		return false
	}
	return cardurl.DomainKey(u) == domain
}

// sameOrigin reports whether u is on origin (scheme, host and port, as
// Origin spells them).
func sameOrigin(u, origin string) bool {
	o, err := fetch.OriginOf(u)
	return err == nil && o == origin
}

// CatalogCrawler crawls catalogs for the registry (registry.CatalogCrawler):
// the periodic crawl and a catalog submitted directly go through it alike.
// Every document comes through its Fetcher.
type CatalogCrawler struct{ *fetch.Fetcher }

// Crawl crawls the catalog at u and reports it in registry terms (the
// caller sets NextCrawlAt). A failure of the root document is Error with
// its class and lists no agent; a crawl with nested catalogs is stored
// without a validator, so a change in a nested one is not hidden behind
// the root's 304.
func (cc CatalogCrawler) Crawl(ctx context.Context, u, etag string) registry.CatalogCrawl {
	res, err := cc.CrawlCatalog(ctx, u, etag)
	rec := registry.CatalogCrawl{URL: u}
	if res != nil {
		rec.Trace, _ = json.Marshal(res)
		rec.Domain = res.Domain
		rec.NotModified = len(res.Documents) == 1 && res.Documents[0].NotModified
		if len(res.Documents) == 1 {
			rec.ETag = res.Documents[0].ETag
		}
		rec.Agents = res.Agents()
		rec.Complete = res.Complete()
	}
	if err != nil {
		rec.Error, rec.ErrorClass = err.Error(), fetch.ClassOf(err)
		if fe := (*fetch.FetchError)(nil); errors.As(err, &fe) {
			rec.HTTPStatus = fe.HTTPStatus
		}
		if rec.ErrorClass == "" {
			rec.ErrorClass = fetch.ClassBlockedAddress // not an http(s) URL: nothing was fetched
		}
		rec.Agents, rec.Complete = nil, false
	}
	return rec
}
