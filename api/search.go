package api

import (
	"context"
	"errors"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// Searcher is what the API needs of the search index (docs/design.md: query →
// api → search for ids, facets and highlights → registry to hydrate).
// *search.Index has it; cmd/cardex serve passes its runtime's index.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (*search.Result, error)
	Skills(ctx context.Context, q search.SkillQuery) (*search.SkillResult, error)
	Tags(ctx context.Context, prefix string, scope registry.Scope, limit int) ([]search.FacetValue, error)
}

// searchRetry is the Retry-After of a 503 from the index: a rebuild of a
// small registry takes seconds, and a timed-out query is worth retrying
// soon but not at once (G.71).
const searchRetry = 5

// errNoSearch answers the search-only parts of the API on a server built
// without an index (Config.Search nil): they are not there, which is
// neither the caller's fault nor a passing state.
func errNoSearch() *problem {
	return newProblem("unavailable", "search is not configured on this server")
}

// errNoReindex answers POST /admin/reindex without Config.Reindex.
func errNoReindex() *problem {
	return newProblem("unavailable", "this server has no search index to rebuild")
}

// decorateSearch fills the problem of a search package error (problems.Of
// classifies them); ok is false for any other error.
func decorateSearch(p *problem, err error) (*problem, bool) {
	switch {
	case errors.Is(err, search.ErrInvalidPageToken):
		setField(p, "/pageToken", "invalid", "the page token was not issued for this query by this server")
	case errors.Is(err, search.ErrInvalidQuery):
		// The API checks each parameter first, with its own pointer; what
		// the index still refuses is about the query text.
		setField(p, "/q", "invalid", "the query cannot be run")
	case errors.Is(err, search.ErrNotReady):
		p.retryAfter = searchRetry
		p.Detail = "the search index is being built; retry after the number of seconds in Retry-After"
	case errors.Is(err, search.ErrOverloaded):
		// Every query slot is busy and the queue is full or moved too
		// slowly: a second later most of them are done.
		p.retryAfter = 1
		p.Detail = "the search index is busy with other queries; retry after the number of seconds in Retry-After"
	case errors.Is(err, search.ErrTimeout):
		p.retryAfter = searchRetry
		p.Detail = "the search took too long; narrow the query or retry later"
	case errors.Is(err, search.ErrClosed):
		p.retryAfter = searchRetry
		p.Detail = "the search index is shutting down"
	default:
		return p, false
	}
	return p, true
}

func setField(p *problem, pointer, code, message string) {
	p.Errors = []registry.FieldError{{Pointer: pointer, Code: code, Message: message}}
	p.Detail = message
}
