package api

import (
	"errors"
	"math"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/search"
)

// checkParams refuses query parameters an operation does not define, so a
// typo (or a filter this server does not implement) is an error instead of
// an unfiltered answer.
func checkParams(q url.Values, known ...string) error {
	for name := range q {
		if !slices.Contains(known, name) {
			n := clip(name, 64)
			return fieldProblem("/"+n, "unknown-parameter", "unknown query parameter "+strconv.Quote(n))
		}
	}
	return nil
}

// intParam reads an optional integer query parameter within [lo, +inf);
// values above hi are clamped to hi (docs/api.md: a limit over 1000 is
// 1000), so "1e9" costs no more than the cap. Page sizes have their own
// rule (pageSizeParam).
func intParam(c echo.Context, name string, def, lo, hi int64) (int64, error) {
	q := c.QueryParams()
	vals, ok := q[name]
	if !ok {
		return def, nil
	}
	if len(vals) != 1 {
		return 0, fieldProblem("/"+name, "repeated", name+" may be given only once")
	}
	n, err := strconv.ParseInt(vals[0], 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && vals[0][0] != '-' {
			return hi, nil
		}
		return 0, fieldProblem("/"+name, "type", name+" must be an integer")
	}
	if n < lo {
		return 0, fieldProblem("/"+name, "minimum", name+" must be at least "+strconv.FormatInt(lo, 10))
	}
	return min(n, hi), nil
}

// pageSizeParam reads pageSize under the page-size rule of every face
// (search.PageSize, docs/api.md "Page sizes"): absent is the default; 0, a
// negative size, one over the maximum or not an integer is 400.
func pageSizeParam(c echo.Context) (int, error) {
	vals, ok := c.QueryParams()["pageSize"]
	if !ok {
		return search.PageSize(nil)
	}
	if len(vals) != 1 {
		return 0, fieldProblem("/pageSize", "repeated", "pageSize may be given only once")
	}
	n, err := strconv.Atoi(vals[0])
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && ne.Err == strconv.ErrRange:
		return 0, fieldProblem("/pageSize", "range", search.ErrPageSize.Error())
	case err != nil:
		return 0, fieldProblem("/pageSize", "type", "pageSize must be an integer")
	}
	size, err := search.PageSize(&n)
	if err != nil {
		return 0, fieldProblem("/pageSize", "range", err.Error())
	}
	return size, nil
}

// cursorParam reads a position in a log (after, before): a non-negative
// int64, taken as given. Unlike a page size it is never clamped: a cursor
// beyond int64 is not a position, and clamping it would answer a different
// question than the one asked.
func cursorParam(c echo.Context, name string, def, lo int64) (int64, error) {
	vals, ok := c.QueryParams()[name]
	if !ok {
		return def, nil
	}
	if len(vals) != 1 {
		return 0, fieldProblem("/"+name, "repeated", name+" may be given only once")
	}
	n, err := strconv.ParseInt(vals[0], 10, 64)
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && ne.Err == strconv.ErrRange && vals[0][0] != '-':
		return 0, fieldProblem("/"+name, "maximum", name+" must be at most "+strconv.FormatInt(math.MaxInt64, 10))
	case err != nil:
		return 0, fieldProblem("/"+name, "type", name+" must be an integer")
	case n < lo:
		return 0, fieldProblem("/"+name, "minimum", name+" must be at least "+strconv.FormatInt(lo, 10))
	}
	return n, nil
}

// enumParam reads a repeatable enumerated query parameter (repeat = OR).
func enumParam[T ~string](c echo.Context, name string, allowed ...T) ([]T, error) {
	var out []T
	for _, v := range c.QueryParams()[name] {
		if !slices.Contains(allowed, T(v)) {
			return nil, fieldProblem("/"+name, "enum", strconv.Quote(clip(v, 64))+" is not a valid "+name)
		}
		if !slices.Contains(out, T(v)) {
			out = append(out, T(v))
		}
	}
	return out, nil
}
