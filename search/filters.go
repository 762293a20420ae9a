package search

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cardexhq/cardex/registry"
)

// The one table of listing filters. Every face that lists agents (the REST
// API's query parameters, the web catalogue's URL, the A2A data part and
// the MCP tool's arguments) reads its filters through ParseFilters or
// ParseQuery under these names, so a filter added here is on every face
// (filters_table_test.go checks the faces against it). Nothing here knows
// HTTP: the values are named strings, as a URL query or a JSON request's
// members give them.

// Filter is one listing filter.
type Filter struct {
	// Name is the parameter, argument and data member name on every face
	// (docs/api.md "Lists and search").
	Name string
	// Title names the filter to people (the web catalogue's sidebar).
	Title string
	// Values are the accepted values of an enumerated filter (anything
	// else is refused: a typo is an error, not an empty result); nil for a
	// free-form one.
	Values []string
	// Admin marks the curation filters, for admin tokens only (docs/api.md
	// "Curation and visibility"): the API and the discovery surfaces refuse
	// them to anyone else, the web ignores them, and the index ANDs them
	// with the viewer's scope regardless.
	Admin bool

	field  string                       // the keyword field of the agent document
	lower  bool                         // values compare lowercased, like the indexed ones
	slot   func(*Filters) *[]string     // where the values go
	facet  func(Facets) []FacetValue    // the facet counting it; nil when the index does not facet on it
	column func(*registry.Agent) string // the SQL column Find re-checks (G.72); nil for card-derived filters
}

// filterTable lists the filters in the order the web catalogue shows them.
var filterTable = []Filter{
	{Name: "tag", Title: "Tags", field: fieldTags, lower: true,
		slot: func(f *Filters) *[]string { return &f.Tags }, facet: func(f Facets) []FacetValue { return f.Tags }},
	{Name: "inputMode", Title: "Input modes", field: fieldInputModes, lower: true,
		slot: func(f *Filters) *[]string { return &f.InputModes }, facet: func(f Facets) []FacetValue { return f.InputModes }},
	{Name: "outputMode", Title: "Output modes", field: fieldOutputModes, lower: true,
		slot: func(f *Filters) *[]string { return &f.OutputModes }, facet: func(f Facets) []FacetValue { return f.OutputModes }},
	{Name: "binding", Title: "Bindings", field: fieldBindings,
		slot: func(f *Filters) *[]string { return &f.Bindings }, facet: func(f Facets) []FacetValue { return f.Bindings }},
	{Name: "securityScheme", Title: "Security schemes", Values: SecuritySchemeValues, field: fieldSchemes,
		slot: func(f *Filters) *[]string { return &f.SecuritySchemes }, facet: func(f Facets) []FacetValue { return f.SecuritySchemes }},
	{Name: "protocolVersion", Title: "Protocol versions", field: fieldProtocols,
		slot: func(f *Filters) *[]string { return &f.ProtocolVersions }, facet: func(f Facets) []FacetValue { return f.ProtocolVersions }},
	{Name: "capability", Title: "Capabilities", Values: CapabilityValues, field: fieldCapabilities,
		slot: func(f *Filters) *[]string { return &f.Capabilities }, facet: func(f Facets) []FacetValue { return f.Capabilities }},
	{Name: "extension", Title: "Extensions", field: fieldExtensions,
		slot: func(f *Filters) *[]string { return &f.Extensions }, facet: func(f Facets) []FacetValue { return f.Extensions }},
	{Name: "trust", Title: "Trust", Values: strs(registry.TrustUnknown, registry.TrustUnsigned, registry.TrustVerified,
		registry.TrustInvalid, registry.TrustUntrusted, registry.TrustError), field: fieldTrust,
		slot: func(f *Filters) *[]string { return &f.Trust }, facet: func(f Facets) []FacetValue { return f.Trust },
		column: func(a *registry.Agent) string { return string(a.Trust) }},
	{Name: "live", Title: "A2A liveness", Values: strs(registry.LivenessStates...), field: fieldLiveness,
		slot: func(f *Filters) *[]string { return &f.Liveness }, facet: func(f Facets) []FacetValue { return f.Liveness },
		column: func(a *registry.Agent) string {
			if a.Liveness == nil {
				return string(registry.LivenessUnknown)
			}
			return string(a.Liveness.State)
		}},
	{Name: "skill", Title: "Skill ids", field: fieldSkillIDs,
		slot: func(f *Filters) *[]string { return &f.SkillIDs }},
	{Name: "provider", Title: "Providers", field: fieldProviderKey, lower: true,
		slot: func(f *Filters) *[]string { return &f.Providers }, facet: func(f Facets) []FacetValue { return f.Providers }},
	{Name: "status", Title: "Status", Admin: true, Values: strs(registry.StatusPending, registry.StatusApproved,
		registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved), field: fieldStatus,
		slot:   func(f *Filters) *[]string { return &f.Statuses },
		column: func(a *registry.Agent) string { return string(a.Status) }},
	{Name: "health", Title: "Health", Admin: true, Values: strs(registry.HealthOK, registry.HealthUnknown,
		registry.HealthFailing, registry.HealthGone), field: fieldHealth,
		slot:   func(f *Filters) *[]string { return &f.Healths },
		column: func(a *registry.Agent) string { return string(a.Health) }},
	{Name: "visibility", Title: "Visibility", Admin: true, Values: strs(registry.VisibilityPublic, registry.VisibilityInternal, registry.VisibilityGroups),
		field:  fieldVisibility,
		slot:   func(f *Filters) *[]string { return &f.Visibilities },
		column: func(a *registry.Agent) string { return string(a.Visibility) }},
}

// FilterTable returns the listing filters, in the order the web catalogue
// shows them.
func FilterTable() []Filter { return slices.Clone(filterTable) }

// FilterNamed returns the filter called name.
func FilterNamed(name string) (Filter, bool) {
	i := slices.IndexFunc(filterTable, func(f Filter) bool { return f.Name == name })
	if i < 0 {
		return Filter{}, false
	}
	return filterTable[i], true
}

// Get returns f's values in fs. (A pointer: a Filters passed by value
// to the slot would be copied to the heap at every call.)
func (f Filter) Get(fs *Filters) []string { return *f.slot(fs) }

// Facet returns the counts of f's values in fc, and false when the index
// does not facet on f (skill ids and the curation filters).
func (f Filter) Facet(fc Facets) ([]FacetValue, bool) {
	if f.facet == nil {
		return nil, false
	}
	return f.facet(fc), true
}

// Query parameters besides the filters, under the same names on every face.
const (
	ParamQ         = "q"
	ParamPageSize  = "pageSize"
	ParamPageToken = "pageToken"
	ParamSort      = "sort"
)

// ParamNames are every name ParseQuery reads: q, the filters, pageSize,
// pageToken and sort.
func ParamNames() []string {
	out := []string{ParamQ}
	for _, f := range filterTable {
		out = append(out, f.Name)
	}
	return append(out, ParamPageSize, ParamPageToken, ParamSort)
}

// ParamError is one bad named value; it wraps ErrInvalidQuery, so every
// face answers it as the caller's mistake naming the parameter (docs/api.md
// "Errors": validation-failed with the pointer /Name; invalid params on
// A2A and MCP).
type ParamError struct {
	Name    string
	Code    string // repeated, too-many, too-long, invalid, enum, type, range
	Message string // without the name
}

func (e *ParamError) Error() string { return e.Name + ": " + e.Message }
func (e *ParamError) Unwrap() error { return ErrInvalidQuery }

func paramError(name, code, format string, args ...any) *ParamError {
	return &ParamError{Name: name, Code: code, Message: fmt.Sprintf(format, args...)}
}

// CurationRequested reports whether vals hold an admin-only filter (a name
// present, even with blank values).
func CurationRequested(vals map[string][]string) bool {
	for _, f := range filterTable {
		if _, ok := vals[f.Name]; ok && f.Admin {
			return true
		}
	}
	return false
}

// ParseFilters reads every filter of the table from vals (names absent
// from the table are left to the caller). A filter's values are bounded
// in count and size like the index bounds them (G.71, I.82); blank values
// are dropped, so an empty form field filters nothing; repeats collapse;
// an enumerated filter refuses any other value. It does not check who may
// use the admin-only filters: see CurationRequested.
func ParseFilters(vals map[string][]string) (Filters, error) {
	var out Filters
	for _, f := range filterTable {
		in := vals[f.Name]
		if len(in) > MaxFilterValues {
			return Filters{}, paramError(f.Name, "too-many", "at most %d values", MaxFilterValues)
		}
		var kept []string
		for _, v := range in {
			if len(v) > MaxFilterBytes || !utf8.ValidString(v) {
				return Filters{}, paramError(f.Name, "invalid", "values must be UTF-8 of at most %d bytes", MaxFilterBytes)
			}
			if strings.TrimSpace(v) == "" || slices.Contains(kept, v) {
				continue
			}
			if f.Values != nil && !slices.Contains(f.Values, v) {
				return Filters{}, paramError(f.Name, "enum", "%s is not one of %s", strconv.Quote(clip(v, 64)), strings.Join(f.Values, ", "))
			}
			kept = append(kept, v)
		}
		*f.slot(&out) = kept
	}
	return out, nil
}

// ParseQuery reads a whole listing from vals: q, the filters
// (ParseFilters), pageSize, pageToken and sort, each of the single ones at
// most once, with the documented defaults (docs/api.md "Lists and search",
// "Page sizes"): no pageSize is DefaultPageSize, no sort is relevance with
// words in q and SortTrust without. Scope is left to the caller
// (Find sets it from the caller).
func ParseQuery(vals map[string][]string) (Query, error) {
	var q Query
	single := func(name string) (string, error) {
		switch v := vals[name]; len(v) {
		case 0:
			return "", nil
		case 1:
			return v[0], nil
		default:
			return "", paramError(name, "repeated", "may be given only once")
		}
	}
	var err error
	if q.Q, err = single(ParamQ); err != nil {
		return q, err
	}
	switch {
	case len(q.Q) > MaxQueryBytes:
		return q, paramError(ParamQ, "too-long", "longer than %d bytes", MaxQueryBytes)
	case !utf8.ValidString(q.Q):
		return q, paramError(ParamQ, "invalid", "not valid UTF-8")
	}
	if q.Filters, err = ParseFilters(vals); err != nil {
		return q, err
	}
	size, err := single(ParamPageSize)
	if err != nil {
		return q, err
	}
	if q.PageSize, err = parsePageSize(size, vals[ParamPageSize] != nil); err != nil {
		return q, err
	}
	if q.PageToken, err = single(ParamPageToken); err != nil {
		return q, err
	}
	sort, err := single(ParamSort)
	if err != nil {
		return q, err
	}
	switch s := Sort(sort); s {
	case "":
	case SortRelevance, SortName, SortUpdated, SortTrust:
		q.Sort = s
	default:
		return q, paramError(ParamSort, "enum", "%s is not one of %s, %s, %s, %s", strconv.Quote(clip(sort, 64)),
			SortRelevance, SortName, SortUpdated, SortTrust)
	}
	return q, nil
}

// parsePageSize is PageSize for a named string value.
func parsePageSize(v string, given bool) (int, error) {
	if !given {
		return PageSize(nil)
	}
	n, err := strconv.Atoi(v)
	var ne *strconv.NumError
	switch {
	case err != nil && errors.As(err, &ne) && ne.Err == strconv.ErrRange:
		return 0, paramError(ParamPageSize, "range", "must be between 1 and %d", MaxPageSize)
	case err != nil:
		return 0, paramError(ParamPageSize, "type", "must be an integer")
	}
	if _, err := PageSize(&n); err != nil {
		return 0, paramError(ParamPageSize, "range", "must be between 1 and %d", MaxPageSize)
	}
	return n, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func strs[T ~string](v ...T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(x)
	}
	return out
}
