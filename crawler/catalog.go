package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/ratelimit"
)

// Outcomes of a catalog entry in a crawl's trace (docs/discovery.md "Listing
// several agents with one catalog").
const (
	CatalogAgent       = "agent"            // an A2A card URL on the catalog's registrable domain
	CatalogInline      = "inline"           // an A2A card given inline
	CatalogOffDomain   = "off-domain"       // on another registrable domain: refused
	CatalogUnsupported = "unsupported-type" // not an A2A card nor a catalog
	CatalogInvalid     = "invalid"          // not a valid entry
	CatalogNested      = "nested"           // a nested catalog, followed
	CatalogNotFollowed = "not-followed"     // a nested catalog past the limits, or seen before
)

// MaxCatalogEntries bounds the entries one crawl reads over every nested
// document together (docs/threats.md I.82): past it the crawl stops reading.
const MaxCatalogEntries = 5000

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
	Domain    string            `json:"domain"` // the registrable domain entries must be on
	Documents []CatalogDocument `json:"documents"`
	Entries   []CatalogEntry    `json:"entries"`
}

// Agents are the card URLs the crawl found for registration.
func (c *CatalogCrawl) Agents() []string {
	var out []string
	for _, e := range c.Entries {
		if e.Outcome == CatalogAgent {
			out = append(out, e.URL)
		}
	}
	return out
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
// (on the same registrable domain, up to aicatalog.MaxNesting deep, each
// once), every URL under the fetcher's network policy, and traces what
// each entry is. etag makes the root fetch conditional; a 304 traces the
// root as not modified and reads nothing. Only a failure of the root
// document is an error; a failing nested one is traced.
func (f *Fetcher) CrawlCatalog(ctx context.Context, root, etag string) (*CatalogCrawl, error) {
	rootURL, err := CatalogURL(root)
	if err != nil {
		return nil, err
	}
	c := &CatalogCrawl{Domain: ratelimit.DomainKey(rootURL)}
	visited := map[string]bool{}
	read := 0
	var walk func(u, etag string, depth int) error
	walk = func(u, etag string, depth int) error {
		visited[u] = true
		doc := CatalogDocument{URL: u, Depth: depth}
		resp, err := f.Fetch(ctx, Request{URL: u, ETag: etag, FollowRedirects: true, SameOriginOnly: true,
			Accept: aicatalog.MediaType + ", application/json"})
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
		lim.MaxBytes = int(f.policy.MaxBodyBytes)
		lim.MaxEntries = min(lim.MaxEntries, MaxCatalogEntries-read)
		parsed, problems, err := aicatalog.Parse(resp.Body, lim)
		if err != nil {
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
			switch e.Type {
			case aicatalog.TypeA2ACard:
				switch {
				case e.URL == "":
					te.Outcome, te.Message = CatalogInline, "an inline card is listed, not registered: Cardex registers agents by a card URL it can crawl again"
				case !f.sameDomain(e.URL, c.Domain):
					te.Outcome = CatalogOffDomain
					te.Message = fmt.Sprintf("on %s, not %s: the host is the agent's identity, so it must be listed (or submitted) from its own domain", ratelimit.DomainKey(e.URL), c.Domain)
				default:
					te.Outcome = CatalogAgent
				}
			case aicatalog.MediaType:
				nested, err := CatalogURL(e.URL)
				switch {
				case e.URL == "" || err != nil:
					te.Outcome, te.Message = CatalogNotFollowed, "a nested catalog needs an http(s) url"
				case !f.sameDomain(nested, c.Domain):
					te.Outcome, te.Message = CatalogOffDomain, "a nested catalog on "+ratelimit.DomainKey(nested)+" is not followed"
				case visited[nested]:
					te.Outcome, te.Message = CatalogNotFollowed, "already read in this crawl"
				case depth+1 >= aicatalog.MaxNesting:
					te.Outcome, te.Message = CatalogNotFollowed, fmt.Sprintf("nested deeper than %d catalogs", aicatalog.MaxNesting)
				case read >= MaxCatalogEntries:
					te.Outcome, te.Message = CatalogNotFollowed, fmt.Sprintf("the crawl already read %d entries", MaxCatalogEntries)
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
	if err := walk(rootURL, etag, 0); err != nil {
		return c, err
	}
	return c, nil
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
func (f *Fetcher) sameDomain(u, domain string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "https" && !(p.Scheme == "http" && f.policy.AllowInsecureHTTP)) {
		return false
	}
	return ratelimit.DomainKey(u) == domain
}
