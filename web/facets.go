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
func facetGroups(kept url.Values, f search.Facets, admin bool) ([]facetGroup, []activeFilter) {
	counts := map[string][]search.FacetValue{
		"tag": f.Tags, "inputMode": f.InputModes, "outputMode": f.OutputModes, "binding": f.Bindings,
		"securityScheme": f.SecuritySchemes, "protocolVersion": f.ProtocolVersions,
		"capability": f.Capabilities, "extension": f.Extensions, "trust": f.Trust, "live": f.Liveness,
		"provider": f.Providers,
	}
	var groups []facetGroup
	var active []activeFilter
	for _, fp := range filterParams {
		if fp.adminOnly && !admin {
			continue
		}
		on := kept[fp.param]
		for _, v := range on {
			active = append(active, activeFilter{Param: fp.param, Label: fp.label, Value: v, URL: toggled(kept, fp.param, v)})
		}
		g := facetGroup{Param: fp.param, Label: fp.label}
		var seen []string
		values, counted := counts[fp.param]
		if !counted {
			for _, v := range adminFacetValues[fp.param] {
				values = append(values, search.FacetValue{Value: v, Count: -1})
			}
		}
		for _, fv := range values {
			seen = append(seen, fv.Value)
			g.Values = append(g.Values, facetLink{Value: fv.Value, Count: fv.Count,
				On: slices.Contains(on, fv.Value), URL: toggled(kept, fp.param, fv.Value)})
		}
		for _, v := range on {
			if !slices.Contains(seen, v) {
				g.Values = append(g.Values, facetLink{Value: v, Count: 0, On: true, URL: toggled(kept, fp.param, v)})
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
