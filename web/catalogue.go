package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

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

// catalogueQuery reads the search from the URL: the API's parameter names
// and the same parse (search.ParseQuery; docs/design.md "HTTP"), so the
// URL holds the whole query and a search can be shared. The catalogue is
// lenient where a shared link may be odd: the admin-only filters are
// dropped for other visitors (an admin's link opened by someone else shows
// what they may see), a repeated q or pageToken counts once, an unknown
// sort is the default and the page size is the default. kept are the
// parameters the page's links carry on.
func catalogueQuery(r *http.Request) (search.Query, url.Values, error) {
	in := r.URL.Query()
	admin := isAdmin(r)
	vals := url.Values{}
	for _, name := range []string{search.ParamQ, search.ParamPageToken} {
		if v := in[name]; len(v) > 0 {
			vals[name] = v[:1]
		}
	}
	switch s := search.Sort(in.Get(search.ParamSort)); s {
	case search.SortName, search.SortUpdated, search.SortRelevance:
		vals.Set(search.ParamSort, string(s))
	}
	for _, f := range search.FilterTable() {
		if v, ok := in[f.Name]; ok && (admin || !f.Admin) {
			vals[f.Name] = v
		}
	}
	q, err := search.ParseQuery(vals)
	if err != nil {
		return q, nil, err
	}
	kept := url.Values{}
	if q.Q != "" {
		kept.Set(search.ParamQ, q.Q)
	}
	if q.Sort != "" {
		kept.Set(search.ParamSort, string(q.Sort))
	}
	for _, f := range search.FilterTable() {
		if v := f.Get(&q.Filters); len(v) > 0 {
			kept[f.Name] = v
		}
	}
	return q, kept, nil
}

// catalogue is GET /: search, facets and one page of results, listed by
// search.Find like every other face: the index picks the page, SQL decides
// what the visitor sees now and re-checks the status, health, visibility,
// trust and liveness filters (docs/threats.md G.72).
func (u *ui) catalogue(w http.ResponseWriter, r *http.Request) error {
	q, kept, err := catalogueQuery(r)
	if err != nil {
		return err
	}
	page, err := search.Find(r.Context(), u.idx, summaryLister{u.svc}, principal(r), q)
	if err != nil {
		return err
	}
	v := catalogueView{Q: q.Q, Sort: kept.Get("sort"), Total: page.TotalSize, ClearAll: "/"}
	if q.Q != "" {
		v.ClearAll = "/?" + url.Values{"q": {q.Q}}.Encode()
	}
	v.Results = make([]resultView, 0, len(page.Agents))
	for i := range page.Agents {
		v.Results = append(v.Results, resultOf(&page.Agents[i].Agent, page.Agents[i].Matches))
	}
	v.Facets, v.Active = facetGroups(kept, page.Facets, isAdmin(r))
	v.VerifiedOnly, v.VerifiedURL = verifiedToggle(kept)
	if page.NextPageToken != "" {
		next := cloneValues(kept)
		next.Set("pageToken", page.NextPageToken)
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

// summaryLister lists a page's agents with their stored card summaries,
// never the cards (docs/threats.md K.96).
type summaryLister struct{ svc *registry.Service }

func (l summaryLister) Listed(ctx context.Context, p registry.Principal, ids []string) ([]registry.Agent, error) {
	return l.svc.ListedSummaries(ctx, p, ids)
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
