package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// filterParams are the catalogue's URL parameters, the same names the API
// uses (docs/design.md "HTTP"): the URL holds the whole query so a search can be
// shared. adminOnly parameters are ignored for other visitors, so an
// admin's link opened by someone else shows what they may see.
var filterParams = []struct {
	param, label string
	adminOnly    bool
	set          func(f *search.Filters, v []string)
}{
	{"tag", "Tags", false, func(f *search.Filters, v []string) { f.Tags = v }},
	{"inputMode", "Input modes", false, func(f *search.Filters, v []string) { f.InputModes = v }},
	{"outputMode", "Output modes", false, func(f *search.Filters, v []string) { f.OutputModes = v }},
	{"binding", "Bindings", false, func(f *search.Filters, v []string) { f.Bindings = v }},
	{"securityScheme", "Security schemes", false, func(f *search.Filters, v []string) { f.SecuritySchemes = v }},
	{"protocolVersion", "Protocol versions", false, func(f *search.Filters, v []string) { f.ProtocolVersions = v }},
	{"capability", "Capabilities", false, func(f *search.Filters, v []string) { f.Capabilities = v }},
	{"extension", "Extensions", false, func(f *search.Filters, v []string) { f.Extensions = v }},
	{"trust", "Trust", false, func(f *search.Filters, v []string) { f.Trust = v }},
	{"live", "A2A liveness", false, func(f *search.Filters, v []string) { f.Liveness = v }},
	{"skill", "Skill ids", false, func(f *search.Filters, v []string) { f.SkillIDs = v }},
	{"provider", "Providers", false, func(f *search.Filters, v []string) { f.Providers = v }},
	{"status", "Status", true, func(f *search.Filters, v []string) { f.Statuses = v }},
	{"health", "Health", true, func(f *search.Filters, v []string) { f.Healths = v }},
	{"visibility", "Visibility", true, func(f *search.Filters, v []string) { f.Visibilities = v }},
}

// adminFacetValues are the values of the admin-only filters, which the
// index does not facet on.
var adminFacetValues = map[string][]string{
	"status":     {"pending", "approved", "rejected", "suspended", "removed"},
	"health":     {"ok", "unknown", "failing", "gone"},
	"visibility": {"public", "internal"},
}

type catalogueView struct {
	Q        string
	Sort     string
	Total    int
	Results  []resultView
	Facets   []facetGroup
	Active   []activeFilter
	Next     string // URL of the next page, "" on the last
	First    string // URL of the first page when not on it
	ClearAll string
	// VerifiedOnly and VerifiedURL are the "verified only" switch.
	VerifiedOnly bool
	VerifiedURL  string
	// Federated are other registries' results for the text, with their
	// source (Config.Federate); never stored.
	Federated []discover.ARDResult
}

// query reads the search from the URL.
func catalogueQuery(r *http.Request) (search.Query, url.Values) {
	in := r.URL.Query()
	admin := isAdmin(r)
	kept := url.Values{}
	q := search.Query{Q: in.Get("q"), PageToken: in.Get("pageToken"), Scope: registry.ScopeOf(principal(r))}
	if q.Q != "" {
		kept.Set("q", q.Q)
	}
	switch s := search.Sort(in.Get("sort")); s {
	case search.SortName, search.SortUpdated, search.SortRelevance:
		q.Sort = s
		kept.Set("sort", string(s))
	}
	if q.Sort == "" && q.Q == "" {
		// Browsing without a query: trusted cards first rather than
		// whatever changed last (the API keeps its own default).
		q.Sort = search.SortTrust
	}
	for _, fp := range filterParams {
		if fp.adminOnly && !admin {
			continue
		}
		var vals []string
		for _, v := range in[fp.param] {
			if v != "" && !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		if len(vals) > 0 {
			fp.set(&q.Filters, vals)
			kept[fp.param] = vals
		}
	}
	return q, kept
}

// catalogue is GET /: search, facets and one page of results.
func (u *ui) catalogue(w http.ResponseWriter, r *http.Request) error {
	q, kept := catalogueQuery(r)
	res, err := u.idx.Search(r.Context(), q)
	if err != nil {
		return err
	}
	v := catalogueView{Q: q.Q, Sort: kept.Get("sort"), Total: res.TotalSize, ClearAll: "/"}
	if q.Q != "" {
		v.ClearAll = "/?" + url.Values{"q": {q.Q}}.Encode()
	}
	if v.Results, err = u.results(r, res.Hits); err != nil {
		return err
	}
	v.Facets, v.Active = facetGroups(kept, res.Facets, isAdmin(r))
	v.VerifiedOnly, v.VerifiedURL = verifiedToggle(kept)
	if res.NextPageToken != "" {
		next := cloneValues(kept)
		next.Set("pageToken", res.NextPageToken)
		v.Next = "/?" + next.Encode()
	}
	if q.PageToken != "" {
		v.First = "/?" + kept.Encode()
	}
	if u.cfg.Federate != nil && strings.TrimSpace(q.Q) != "" && q.PageToken == "" {
		v.Federated = u.cfg.Federate(r.Context(), q.Q)
	}
	title := "Catalogue"
	if q.Q != "" {
		title = "Search: " + visible(q.Q)
	}
	u.render(w, r, http.StatusOK, "catalogue", title, v)
	return nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
