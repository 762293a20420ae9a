package api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// searchOnlyParams are the query parameters only the index can answer
// (docs/api.md "Lists and search"); the SQL listing has none of them.
var searchOnlyParams = []string{"q", "tag", "skill", "inputMode", "outputMode", "capability",
	"binding", "securityScheme", "protocolVersion", "provider", "extension", "live"}

// usesSearch reports whether a list request needs the index: a search-only
// parameter or sort=relevance.
func usesSearch(q url.Values) bool {
	for _, name := range searchOnlyParams {
		if _, ok := q[name]; ok {
			return true
		}
	}
	return slices.Contains(q["sort"], string(search.SortRelevance))
}

// searchRequest is a parsed search: the index query plus the SQL-column
// filters that hydration re-checks (G.72).
type searchRequest struct {
	q        string
	filters  search.Filters
	caller   registry.Principal
	pageSize int
	token    string
	sort     search.Sort
}

// searchParams reads the query text and filters shared by GET /agents and
// GET /skills. Non-admins filtering on status, health or visibility get 403
// before anything else is looked at, as on the SQL listing (docs/api.md "Curation and visibility").
func searchParams(c echo.Context, extra ...string) (searchRequest, error) {
	var r searchRequest
	qv := c.QueryParams()
	p := principal(c)
	if qv.Has("status") || qv.Has("health") || qv.Has("visibility") {
		if err := registry.CurationFilters(p); err != nil {
			return r, err
		}
	}
	known := append([]string{"status", "health", "trust", "visibility", "pageSize", "pageToken"}, searchOnlyParams...)
	if err := checkParams(qv, append(known, extra...)...); err != nil {
		return r, err
	}
	r.caller = p
	var err error
	if r.q, err = queryText(qv, "q"); err != nil {
		return r, err
	}
	f := &r.filters
	for _, fv := range []struct {
		name string
		dst  *[]string
	}{
		{"tag", &f.Tags}, {"skill", &f.SkillIDs}, {"inputMode", &f.InputModes}, {"outputMode", &f.OutputModes},
		{"binding", &f.Bindings}, {"protocolVersion", &f.ProtocolVersions}, {"provider", &f.Providers},
		{"extension", &f.Extensions},
	} {
		if *fv.dst, err = filterValues(qv, fv.name); err != nil {
			return r, err
		}
	}
	if f.Capabilities, err = enumStrings(c, "capability", search.CapabilityValues...); err != nil {
		return r, err
	}
	if f.SecuritySchemes, err = enumStrings(c, "securityScheme", search.SecuritySchemeValues...); err != nil {
		return r, err
	}
	if f.Trust, err = enumStrings(c, "trust", strs(registry.TrustUnknown, registry.TrustUnsigned,
		registry.TrustVerified, registry.TrustInvalid, registry.TrustUntrusted, registry.TrustError)...); err != nil {
		return r, err
	}
	if f.Liveness, err = enumStrings(c, "live", strs(registry.LivenessStates...)...); err != nil {
		return r, err
	}
	if f.Statuses, err = enumStrings(c, "status", strs(registry.StatusPending, registry.StatusApproved,
		registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved)...); err != nil {
		return r, err
	}
	if f.Healths, err = enumStrings(c, "health", strs(registry.HealthUnknown, registry.HealthOK,
		registry.HealthFailing, registry.HealthGone)...); err != nil {
		return r, err
	}
	if f.Visibilities, err = enumStrings(c, "visibility", strs(registry.VisibilityPublic, registry.VisibilityInternal, registry.VisibilityGroups)...); err != nil {
		return r, err
	}
	if r.pageSize, err = pageSizeParam(c); err != nil {
		return r, err
	}
	if r.token, err = single(qv, "pageToken"); err != nil {
		return r, err
	}
	return r, nil
}

// queryText reads a single free-text parameter within the index's bounds
// (docs/threats.md G.71: longer text is refused, not truncated).
func queryText(qv url.Values, name string) (string, error) {
	v, err := single(qv, name)
	if err != nil {
		return "", err
	}
	switch {
	case len(v) > search.MaxQueryBytes:
		return "", fieldProblem("/"+name, "too-long", name+" is longer than "+strconv.Itoa(search.MaxQueryBytes)+" bytes")
	case !utf8.ValidString(v):
		return "", fieldProblem("/"+name, "invalid", name+" is not valid UTF-8")
	}
	return v, nil
}

// single reads a parameter that may be given at most once.
func single(qv url.Values, name string) (string, error) {
	vals := qv[name]
	if len(vals) > 1 {
		return "", fieldProblem("/"+name, "repeated", name+" may be given only once")
	}
	if len(vals) == 0 {
		return "", nil
	}
	return vals[0], nil
}

// filterValues reads a repeatable free-form filter (repeat = OR). Blank
// values are dropped, so an empty form field filters nothing; the number
// and size of values are bounded like the index bounds them (G.71, I.82).
func filterValues(qv url.Values, name string) ([]string, error) {
	if len(qv[name]) > search.MaxFilterValues {
		return nil, fieldProblem("/"+name, "too-many", name+" may be given at most "+strconv.Itoa(search.MaxFilterValues)+" times")
	}
	var out []string
	for _, v := range qv[name] {
		if len(v) > search.MaxFilterBytes || !utf8.ValidString(v) {
			return nil, fieldProblem("/"+name, "invalid", name+" values must be UTF-8 of at most "+strconv.Itoa(search.MaxFilterBytes)+" bytes")
		}
		if strings.TrimSpace(v) != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// enumStrings is enumParam for filters the index takes as strings.
func enumStrings(c echo.Context, name string, allowed ...string) ([]string, error) {
	return enumParam(c, name, allowed...)
}

func strs[T ~string](v ...T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(x)
	}
	return out
}
