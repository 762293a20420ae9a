package discover

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Request is a structured search: the query parameters of GET
// /api/v1/agents under the same names, each filter a list of values (values
// of one filter are ORed, filters are ANDed). Status, Health and Visibility
// are for admin tokens only, as on the API.
type Request struct {
	Q               string   `json:"q,omitempty" jsonschema:"free text matched against names, descriptions, providers and skills"`
	Tag             []string `json:"tag,omitempty" jsonschema:"skill tags (case-insensitive)"`
	Skill           []string `json:"skill,omitempty" jsonschema:"skill ids"`
	InputMode       []string `json:"inputMode,omitempty" jsonschema:"accepted input media types, e.g. text/plain"`
	OutputMode      []string `json:"outputMode,omitempty" jsonschema:"produced output media types, e.g. application/json"`
	Capability      []string `json:"capability,omitempty" jsonschema:"streaming, pushNotifications or extendedAgentCard"`
	Binding         []string `json:"binding,omitempty" jsonschema:"protocol bindings: JSONRPC, GRPC, HTTP+JSON"`
	SecurityScheme  []string `json:"securityScheme,omitempty" jsonschema:"apiKey, http, oauth2, openIdConnect or mutualTls"`
	ProtocolVersion []string `json:"protocolVersion,omitempty" jsonschema:"A2A protocol versions, e.g. 1.0 or 0.3"`
	Provider        []string `json:"provider,omitempty" jsonschema:"provider organization (case-insensitive)"`
	Extension       []string `json:"extension,omitempty" jsonschema:"extension URIs"`
	Trust           []string `json:"trust,omitempty" jsonschema:"signature verdicts: verified, unsigned, unknown, invalid, untrusted, error"`
	Status          []string `json:"status,omitempty" jsonschema:"admin tokens only: curation status"`
	Health          []string `json:"health,omitempty" jsonschema:"admin tokens only: unknown, ok, failing, gone"`
	Visibility      []string `json:"visibility,omitempty" jsonschema:"admin tokens only: public or internal"`
	// PageSize follows search.PageSize: absent is 20, 0 or over 100 is
	// refused.
	PageSize  *int   `json:"pageSize,omitempty" jsonschema:"results per page, 1 to 100 (default 20)"`
	PageToken string `json:"pageToken,omitempty" jsonschema:"nextPageToken of the previous page of the same search"`
}

// ErrInvalid is a request with a bad field (FieldError says which); the
// surfaces answer it as invalid params.
var ErrInvalid = errors.New("invalid request")

// FieldError is one bad field of a Request, named by its JSON name.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string        { return e.Field + ": " + e.Message }
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Query checks r for caller under the same rules as the API's query
// parameters and returns the index query. Admin-only filters from anyone
// else are registry.ErrForbidden.
func (r Request) Query(caller registry.Principal) (search.Query, error) {
	var q search.Query
	if len(r.Status) > 0 || len(r.Health) > 0 || len(r.Visibility) > 0 {
		if err := registry.CurationFilters(caller); err != nil {
			return q, fmt.Errorf("%w: status, health and visibility filters need an admin token", err)
		}
	}
	if len(r.Q) > search.MaxQueryBytes {
		return q, bad("q", "longer than %d bytes", search.MaxQueryBytes)
	}
	if !utf8.ValidString(r.Q) {
		return q, bad("q", "not valid UTF-8")
	}
	size, err := search.PageSize(r.PageSize)
	if err != nil {
		return q, bad("pageSize", "must be between 1 and %d", search.MaxPageSize)
	}
	f := &q.Filters
	for _, fv := range []struct {
		name    string
		in      []string
		dst     *[]string
		allowed []string
	}{
		{"tag", r.Tag, &f.Tags, nil},
		{"skill", r.Skill, &f.SkillIDs, nil},
		{"inputMode", r.InputMode, &f.InputModes, nil},
		{"outputMode", r.OutputMode, &f.OutputModes, nil},
		{"capability", r.Capability, &f.Capabilities, search.CapabilityValues},
		{"binding", r.Binding, &f.Bindings, nil},
		{"securityScheme", r.SecurityScheme, &f.SecuritySchemes, search.SecuritySchemeValues},
		{"protocolVersion", r.ProtocolVersion, &f.ProtocolVersions, nil},
		{"provider", r.Provider, &f.Providers, nil},
		{"extension", r.Extension, &f.Extensions, nil},
		{"trust", r.Trust, &f.Trust, strs(registry.TrustUnknown, registry.TrustUnsigned, registry.TrustVerified,
			registry.TrustInvalid, registry.TrustUntrusted, registry.TrustError)},
		{"status", r.Status, &f.Statuses, strs(registry.StatusPending, registry.StatusApproved,
			registry.StatusRejected, registry.StatusSuspended, registry.StatusRemoved)},
		{"health", r.Health, &f.Healths, strs(registry.HealthUnknown, registry.HealthOK, registry.HealthFailing, registry.HealthGone)},
		{"visibility", r.Visibility, &f.Visibilities, strs(registry.VisibilityPublic, registry.VisibilityInternal, registry.VisibilityGroups)},
	} {
		vals, err := values(fv.name, fv.in, fv.allowed)
		if err != nil {
			return q, err
		}
		*fv.dst = vals
	}
	q.Q = r.Q
	q.PageSize = size
	q.PageToken = r.PageToken
	return q, nil
}

// values checks one filter like the API checks a repeated query parameter:
// bounded in count and size, blank values dropped, repeats collapsed, and
// enumerated filters limited to their values.
func values(name string, in, allowed []string) ([]string, error) {
	if len(in) > search.MaxFilterValues {
		return nil, bad(name, "at most %d values", search.MaxFilterValues)
	}
	var out []string
	for _, v := range in {
		if len(v) > search.MaxFilterBytes || !utf8.ValidString(v) {
			return nil, bad(name, "values must be UTF-8 of at most %d bytes", search.MaxFilterBytes)
		}
		if strings.TrimSpace(v) == "" || slices.Contains(out, v) {
			continue
		}
		if allowed != nil && !slices.Contains(allowed, v) {
			return nil, bad(name, "%q is not one of %s", v, strings.Join(allowed, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

func strs[T ~string](v ...T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(x)
	}
	return out
}
