package discover

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

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
	Live            []string `json:"live,omitempty" jsonschema:"A2A liveness: answering, degraded, unreachable, unknown"`
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
// parameters (search.ParseQuery, the one parse of every face) and returns
// the index query. Admin-only filters from anyone else are
// registry.ErrForbidden.
func (r Request) Query(caller registry.Principal) (search.Query, error) {
	vals := r.values()
	if search.CurationRequested(vals) {
		if err := registry.CurationFilters(caller); err != nil {
			return search.Query{}, fmt.Errorf("%w: status, health and visibility filters need an admin token", err)
		}
	}
	q, err := search.ParseQuery(vals)
	if pe := (*search.ParamError)(nil); errors.As(err, &pe) {
		return search.Query{}, bad(pe.Name, "%s", pe.Message)
	}
	return q, err
}

// values are r's members as named strings, by their JSON names: every
// []string member is a filter of search.FilterTable (the table test checks
// that each filter has its member), q, pageSize and pageToken.
func (r Request) values() map[string][]string {
	out := map[string][]string{}
	rv := reflect.ValueOf(r)
	for i, f := range reflect.VisibleFields(rv.Type()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v, ok := rv.Field(i).Interface().([]string); ok && v != nil {
			out[name] = v
		}
	}
	if r.Q != "" {
		out[search.ParamQ] = []string{r.Q}
	}
	if r.PageSize != nil {
		out[search.ParamPageSize] = []string{strconv.Itoa(*r.PageSize)}
	}
	if r.PageToken != "" {
		out[search.ParamPageToken] = []string{r.PageToken}
	}
	return out
}
