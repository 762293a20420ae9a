package web

import (
	"net/url"
	"slices"

	"github.com/cardexhq/cardex/search"
)

type facetGroup struct {
	Param, Label string
	Values       []facetLink
}

type facetLink struct {
	Value string
	Count int // -1 when the index does not count this facet
	On    bool
	URL   string // the catalogue with this value toggled
}

type activeFilter struct {
	Param, Label, Value, URL string // URL removes the filter
}

// facetGroups builds the sidebar: every facet value links to the current
// search with that value added (or removed when it is on), so filtering
// works as plain links without JavaScript. Values that are on but have no
// count in this result still show, so they can be switched off.
func facetGroups(kept url.Values, fc search.Facets, admin bool) ([]facetGroup, []activeFilter) {
	var groups []facetGroup
	var active []activeFilter
	for _, f := range search.FilterTable() {
		if f.Admin && !admin {
			continue
		}
		on := kept[f.Name]
		for _, v := range on {
			active = append(active, activeFilter{Param: f.Name, Label: f.Title, Value: v, URL: toggled(kept, f.Name, v)})
		}
		g := facetGroup{Param: f.Name, Label: f.Title}
		var seen []string
		values, counted := f.Facet(fc)
		if !counted && f.Admin {
			// The index does not count the curation filters: their values,
			// uncounted.
			for _, v := range f.Values {
				values = append(values, search.FacetValue{Value: v, Count: -1})
			}
		}
		for _, fv := range values {
			seen = append(seen, fv.Value)
			g.Values = append(g.Values, facetLink{Value: fv.Value, Count: fv.Count,
				On: slices.Contains(on, fv.Value), URL: toggled(kept, f.Name, fv.Value)})
		}
		for _, v := range on {
			if !slices.Contains(seen, v) {
				g.Values = append(g.Values, facetLink{Value: v, Count: 0, On: true, URL: toggled(kept, f.Name, v)})
			}
		}
		if len(g.Values) > 0 {
			groups = append(groups, g)
		}
	}
	return groups, active
}

// toggled is the catalogue URL with value v of param switched, back on the
// first page.
func toggled(kept url.Values, param, v string) string {
	q := cloneValues(kept)
	q.Del("pageToken")
	if i := slices.Index(q[param], v); i >= 0 {
		q[param] = slices.Delete(q[param], i, i+1)
		if len(q[param]) == 0 {
			q.Del(param)
		}
	} else {
		q[param] = append(q[param], v)
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// verifiedToggle is the "verified only" switch: on when the trust filter
// is exactly "verified"; its URL turns it off (no trust filter) or on
// (trust=verified alone), back on the first page.
func verifiedToggle(kept url.Values) (on bool, href string) {
	q := cloneValues(kept)
	q.Del("pageToken")
	on = len(kept["trust"]) == 1 && kept.Get("trust") == "verified"
	if on {
		q.Del("trust")
	} else {
		q.Set("trust", "verified")
	}
	if len(q) == 0 {
		return on, "/"
	}
	return on, "/?" + q.Encode()
}
