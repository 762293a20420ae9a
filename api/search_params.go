package api

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// sqlListParams are the filters the SQL listing answers too (listQuery);
// every other filter of the search filter table, and q, only the index can
// answer (docs/api.md "Lists and search").
var sqlListParams = []string{"status", "health", "trust", "visibility"}

// searchOnlyParams are q and the filters of search.FilterTable the SQL
// listing has not.
var searchOnlyParams = func() []string {
	out := []string{search.ParamQ}
	for _, f := range search.FilterTable() {
		if !slices.Contains(sqlListParams, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}()

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

// searchRequest is a parsed search: the index query (search.ParseQuery,
// the one parse every face uses) and who asks.
type searchRequest struct {
	query  search.Query
	caller registry.Principal
}

// searchParams reads the query text, filters and paging shared by GET
// /agents and GET /skills; sort only when withSort (GET /agents). Non-admins
// filtering on status, health or visibility get 403 before anything else
// is looked at, as on the SQL listing (docs/api.md "Curation and visibility").
func searchParams(c echo.Context, withSort bool) (searchRequest, error) {
	var r searchRequest
	qv := c.QueryParams()
	p := principal(c)
	if search.CurationRequested(qv) {
		if err := registry.CurationFilters(p); err != nil {
			return r, err
		}
	}
	known := search.ParamNames()
	if !withSort {
		known = slices.DeleteFunc(known, func(n string) bool { return n == search.ParamSort })
	}
	if err := checkParams(qv, known...); err != nil {
		return r, err
	}
	q, err := search.ParseQuery(qv)
	if pe := (*search.ParamError)(nil); errors.As(err, &pe) {
		return r, fieldProblem("/"+pe.Name, pe.Code, pe.Error())
	} else if err != nil {
		return r, err
	}
	r.query, r.caller = q, p
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
