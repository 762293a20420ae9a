package search

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cardexhq/cardex/registry"
)

// Limits that keep every query bounded whatever the caller sends
// (docs/threats.md G.71, I.82).
const (
	MaxQueryBytes    = 512    // longer q is refused, not truncated
	MaxQueryWords    = 32     // analyzed words beyond this are ignored
	MaxFilterValues  = 32     // values of one filter
	MaxFilterBytes   = 512    // bytes of one filter value
	DefaultPageSize  = 20     // docs/api.md "Page sizes"
	MaxPageSize      = 100    // larger page sizes are refused (PageSize)
	MaxResultWindow  = 10_000 // deepest result reachable by paging
	maxTagsFacet     = 20     // docs/api.md: tags and extensions top 20
	maxOtherFacet    = 50
	maxTagsListLimit = 1000
)

// Filters restrict results. Values of one filter are ORed; different
// filters are ANDed (docs/api.md). Tags, modes and providers compare
// case-insensitively; the rest exactly. Status, Health and Visibility are
// for admins: the API refuses them to others with 403, and the index ANDs
// them with the viewer's scope anyway.
type Filters struct {
	Tags             []string
	SkillIDs         []string // skill ids
	InputModes       []string // match the card's default modes or any skill's
	OutputModes      []string
	Capabilities     []string // streaming, pushNotifications, extendedAgentCard
	Bindings         []string // JSONRPC, GRPC, HTTP+JSON, or a custom URI
	SecuritySchemes  []string // apiKey, http, oauth2, openIdConnect, mutualTls
	ProtocolVersions []string
	Trust            []string
	Liveness         []string // answering, degraded, unreachable, unknown (docs/liveness.md)
	Providers        []string // provider organization
	Extensions       []string // extension URIs
	Statuses         []string
	Healths          []string
	Visibilities     []string
}

// The values of the enumerated card-derived filters: every face refuses
// any other value (a typo is an error, not an empty result).
var (
	CapabilityValues     = []string{"streaming", "pushNotifications", "extendedAgentCard"}
	SecuritySchemeValues = []string{"apiKey", "http", "oauth2", "openIdConnect", "mutualTls"}
)

// fields pairs each filter with its keyword field and whether its values
// are lowercased like the indexed ones, in the order of the filter table
// (filters.go).
func (f *Filters) fields() []filterField {
	out := make([]filterField, len(filterTable))
	for i := range filterTable {
		ft := &filterTable[i]
		out[i] = filterField{ft.field, ft.Get(f), ft.lower}
	}
	return out
}

type filterField struct {
	field  string
	values []string
	lower  bool
}

// Sort orders results (docs/api.md).
type Sort string

// Sorts. The zero Sort is relevance when Q has words; without, SortTrust:
// reachable agents with a verified signature first, then signed ones whose
// key is not trusted, then unsigned ones, then those whose signature check
// failed, then agents failing their health checks, each group most recently
// updated first (see defaultRank). SortUpdated is updatedAt alone.
const (
	SortRelevance Sort = "relevance"
	SortName      Sort = "name"
	SortUpdated   Sort = "updated"
	// SortTrust is the browsing order without a query, and the zero
	// Sort's order when q has no words: see defaultRank.
	SortTrust Sort = "trust"
)

// Query is one search of agents.
type Query struct {
	Q         string
	Filters   Filters
	Scope     registry.Scope // registry.ScopeOf the caller: what it may list
	PageSize  int            // default 20, clamped to 100
	PageToken string         // from a previous Result.NextPageToken
	Sort      Sort
}

func (q Query) validate() error {
	if err := validateText(q.Q); err != nil {
		return err
	}
	switch q.Sort {
	case "", SortRelevance, SortName, SortUpdated, SortTrust:
	default:
		return fmt.Errorf("%w: unknown sort %q", ErrInvalidQuery, q.Sort)
	}
	return q.Filters.validate()
}

func (q Query) sort() Sort {
	switch {
	case q.Sort != "":
		return q.Sort
	case strings.TrimSpace(q.Q) != "":
		return SortRelevance
	default:
		return SortTrust
	}
}

func validateText(s string) error {
	if len(s) > MaxQueryBytes {
		return fmt.Errorf("%w: q is %d bytes, at most %d", ErrInvalidQuery, len(s), MaxQueryBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: q is not valid UTF-8", ErrInvalidQuery)
	}
	return nil
}

func (f Filters) validate() error {
	for _, ff := range f.fields() {
		if len(ff.values) > MaxFilterValues {
			return fmt.Errorf("%w: %d values for %s, at most %d", ErrInvalidQuery, len(ff.values), ff.field, MaxFilterValues)
		}
		for _, v := range ff.values {
			if len(v) > MaxFilterBytes || !utf8.ValidString(v) {
				return fmt.Errorf("%w: bad value for %s", ErrInvalidQuery, ff.field)
			}
		}
	}
	return nil
}

// ErrPageSize is a page size outside 1..MaxPageSize. Every face answers
// it as the caller's mistake: 400 on the REST API, invalid params on
// JSON-RPC, a tool error on MCP.
var ErrPageSize = fmt.Errorf("pageSize must be between 1 and %d", MaxPageSize)

// PageSize is the one page-size rule of every face that lists agents or
// skills (docs/api.md "Page sizes"): no page size (nil) is
// DefaultPageSize; 1 to MaxPageSize is taken as given; 0, a negative size
// or one over MaxPageSize is ErrPageSize, never silently the default or
// the maximum, so a client learns the bound instead of paging on a
// different size than it asked for.
func PageSize(n *int) (int, error) {
	switch {
	case n == nil:
		return DefaultPageSize, nil
	case *n < 1 || *n > MaxPageSize:
		return 0, ErrPageSize
	}
	return *n, nil
}

// clampPageSize bounds a Query's page size for callers inside Cardex that
// set one directly; what clients send goes through PageSize first.
func clampPageSize(n int) int {
	switch {
	case n <= 0:
		return DefaultPageSize
	case n > MaxPageSize:
		return MaxPageSize
	default:
		return n
	}
}
