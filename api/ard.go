package api

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/discover"
	"github.com/cardexhq/cardex/ratelimit"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
	"github.com/cardexhq/cardex/strictjson"
)

// The ARD registry API under /ard (docs/discovery.md "ARD registry API"):
// the agents the caller may list, found by search.Find and read by
// registry.Service.Get like every other face, as ARD entries. Its errors
// are ARD's envelope (writeARDError); its reads spend the same budget as
// the API's (limitReads, ardCharge).

// ARD page sizes: ARD's default for search, and the most any page holds.
const (
	ardSearchPageSize = 10
	maxARDIdentifier  = 1024
)

// ardBase is Cardex's public URL: --base-url, or the request's origin.
func (s *server) ardBase(c echo.Context) string {
	if s.baseURL != "" {
		return s.baseURL
	}
	scheme := "http"
	if c.Request().TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host
}

// ardFind runs q as the caller through search.Find and returns the page as
// discovery agents, scores kept.
func (s *server) ardFind(c echo.Context, q search.Query) ([]discover.Agent, *search.Page, error) {
	if s.search == nil {
		return nil, nil, errNoSearch()
	}
	page, err := search.Find(c.Request().Context(), s.search, summaryLister{s.svc}, principal(c), q)
	if err != nil {
		return nil, nil, err
	}
	base := s.ardBase(c)
	out := make([]discover.Agent, 0, len(page.Agents))
	for _, fa := range page.Agents {
		a := discover.Summarize(fa.Agent, fa.Matches, base)
		a.Score = fa.Score
		out = append(out, a)
	}
	return out, page, nil
}

// ardQuery is a checked ARD query: the text, and the filter as Cardex's
// request (type is answered here: Cardex lists A2A agent cards only).
type ardQuery struct {
	text   string
	tags   []string
	noneOf bool // the type filter names no type Cardex lists
}

// request is q as the structured request every discovery face checks
// (discover.Request.Query: the API's bounds on text and filters).
func (q ardQuery) request(size int, token string) discover.Request {
	return discover.Request{Q: q.text, Tag: q.tags, PageSize: &size, PageToken: token}
}

// listARD is GET /ard/agents: every agent the caller may list, a page at a
// time, in a deterministic order (no relevance).
func (s *server) listARD(c echo.Context) error {
	if err := checkParams(c.QueryParams(), "filter", "orderBy", "pageSize", "pageToken"); err != nil {
		return err
	}
	size, err := pageSizeParam(c)
	if err != nil {
		return err
	}
	q, err := ardListFilter(c.QueryParam("filter"))
	if err != nil {
		return err
	}
	sort, err := ardOrder(c.QueryParam("orderBy"))
	if err != nil {
		return err
	}
	out := map[string]any{"items": []discover.ARDEntry{}, "total": 0}
	if q.noneOf {
		return c.JSON(http.StatusOK, out)
	}
	sq, err := q.request(size, c.QueryParam("pageToken")).Query(principal(c))
	if err != nil {
		return err
	}
	sq.Sort = sort
	agents, page, err := s.ardFind(c, sq)
	if err != nil {
		return err
	}
	items := make([]discover.ARDEntry, 0, len(agents))
	for _, a := range agents {
		items = append(items, discover.ARD(a, s.ardBase(c)))
	}
	out["items"], out["total"] = items, page.TotalSize
	if page.NextPageToken != "" {
		out["pageToken"] = page.NextPageToken
	}
	return c.JSON(http.StatusOK, out)
}

// ardListFilter reads GET /ard/agents' filter: clauses joined by AND, each
// name=value[,value…] (values ORed). Cardex filters on type and tags; any
// other name is refused rather than ignored.
func ardListFilter(f string) (ardQuery, error) {
	var q ardQuery
	if strings.TrimSpace(f) == "" {
		return q, nil
	}
	if len(f) > search.MaxQueryBytes || !utf8.ValidString(f) {
		return q, ardInvalid("filter is longer than the query limit or not UTF-8")
	}
	for _, clause := range splitAnd(f) {
		name, vals, ok := strings.Cut(clause, "=")
		if !ok {
			return q, ardInvalid("filter: each clause is name=value[,value…]")
		}
		var list []string
		for _, v := range strings.Split(vals, ",") {
			if v = strings.Trim(strings.TrimSpace(v), `"`); v != "" {
				list = append(list, v)
			}
		}
		switch strings.TrimSpace(name) {
		case "type":
			q.noneOf = !listsCards(list)
		case "tags", "tag":
			q.tags = append(q.tags, list...)
		default:
			return q, ardInvalid("filter: " + clip(strings.TrimSpace(name), 64) + " is not a field this registry filters on (type, tags)")
		}
	}
	return q, nil
}

// splitAnd splits a filter at its AND keywords (any case).
func splitAnd(f string) []string {
	var out []string
	words := strings.Fields(f)
	cur := []string{}
	for _, w := range words {
		if strings.EqualFold(w, "AND") {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
			continue
		}
		cur = append(cur, w)
	}
	return append(out, strings.Join(cur, " "))
}

// listsCards reports whether a type filter admits the A2A agent cards
// Cardex lists (any spelling aicatalog reads as one).
func listsCards(types []string) bool {
	return slices.ContainsFunc(types, func(t string) bool { return aicatalog.CanonicalType(t) == aicatalog.TypeA2ACard })
}

// ardOrder reads orderBy: by name, or by last update (newest first).
func ardOrder(o string) (search.Sort, error) {
	switch strings.ToLower(strings.Join(strings.Fields(o), " ")) {
	case "":
		return search.SortUpdated, nil
	case "name", "displayname", "name asc", "displayname asc":
		return search.SortName, nil
	case "updated", "updatedat desc", "updated_at desc", "updatedat", "updated_at":
		return search.SortUpdated, nil
	}
	return "", ardInvalid("orderBy: displayName or updatedAt desc")
}

// getARD is GET /ard/agents/{identifier}: one agent by the identifier
// Cardex's ARD and AI Catalog documents give it (its publisher's urn:air
// identifier, a legacy urn:ai: spelling of it, or one of Cardex's own),
// found only when the caller may list it (registry.CanList): ARD lookups
// answer what ARD lists and searches show, never a pending or hidden agent
// by a guessable name.
func (s *server) getARD(c echo.Context) error {
	if err := checkParams(c.QueryParams()); err != nil {
		return err
	}
	ident, err := ardIdentifierParam(c)
	if err != nil {
		return err
	}
	base := s.ardBase(c)
	var a *registry.Agent
	if id := discover.OwnID(ident, base); id != "" {
		a, err = s.svc.Get(c.Request().Context(), principal(c), id)
		if err == nil && !registry.CanList(principal(c), *a) {
			err = registry.ErrNotFound
		}
	} else {
		folded, _ := aicatalog.FoldIdentifier(ident)
		a, err = s.svc.AgentByIdentifier(c.Request().Context(), principal(c), folded)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, discover.ARD(discover.Summarize(*a, nil, base), base))
}

// ardIdentifierParam is the path's identifier, percent-decoded once: a URN
// or an http(s) URL of at most maxARDIdentifier bytes, in UTF-8 without
// control characters; anything else is INVALID_ARGUMENT.
func ardIdentifierParam(c echo.Context) (string, error) {
	raw := c.Param("identifier")
	ident := raw
	if c.Request().URL.RawPath != "" {
		// echo routes on the escaped path when there is one, so the
		// segment is still escaped.
		var err error
		if ident, err = url.PathUnescape(raw); err != nil {
			return "", ardInvalid("identifier: not a valid percent-encoded path segment")
		}
	}
	lower := strings.ToLower(ident)
	switch {
	case ident == "" || len(ident) > maxARDIdentifier || !utf8.ValidString(ident):
		return "", ardInvalid("identifier: 1 to 1024 bytes of UTF-8")
	case strings.IndexFunc(ident, unicode.IsControl) >= 0 || strings.ContainsAny(ident, " \t"):
		return "", ardInvalid("identifier: no spaces or control characters")
	case strings.HasPrefix(lower, "urn:"):
		if nid, nss, ok := strings.Cut(ident[len("urn:"):], ":"); !ok || nid == "" || nss == "" {
			return "", ardInvalid("identifier: a URN is urn:<namespace>:<name>")
		}
	case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
	default:
		return "", ardInvalid("identifier: a URN (urn:air:…) or the URL of an agent's page on this registry")
	}
	return ident, nil
}

// searchARD is POST /ard/search: the caller's agents ranked by relevance
// to query.text, with the peers' results when federation asks for them
// (ardFederate).
func (s *server) searchARD(c echo.Context) error {
	body, _, err := readBody(c, true)
	if err != nil {
		return err
	}
	if err := ardMembers(body, "", "query", "federation", "pageSize", "pageToken"); err != nil {
		return err
	}
	q, err := ardQueryOf(body.Get("query"), true)
	if err != nil {
		return err
	}
	size := ardSearchPageSize
	if v := body.Get("pageSize"); v != nil {
		n, ok := ardInt(v)
		if !ok || n < 1 || n > search.MaxPageSize {
			return ardInvalid("pageSize: an integer from 1 to 100")
		}
		size = n
	}
	token, err := ardString(body, "pageToken")
	if err != nil {
		return err
	}
	fed, err := ardString(body, "federation")
	if err != nil {
		return err
	}
	switch fed {
	case "":
		fed = discover.FederationAuto // ARD's default
	case discover.FederationAuto, discover.FederationReferrals, discover.FederationNone:
	default:
		return ardInvalid("federation: auto, referrals or none")
	}
	if err := s.ardCharge(c, ratelimit.ReadCost(size)-1); err != nil {
		return err
	}
	base := s.ardBase(c)
	self := base + discover.ARDPath
	results := []discover.ARDResult{}
	next := ""
	if !q.noneOf {
		sq, err := q.request(size, token).Query(principal(c))
		if err != nil {
			return err
		}
		agents, page, err := s.ardFind(c, sq)
		if err != nil {
			return err
		}
		for _, a := range agents {
			results = append(results, discover.ARDResult{ARDEntry: discover.ARD(a, base), Score: discover.ARDScore(a.Score), Source: self})
		}
		next = page.NextPageToken
	}
	out := map[string]any{}
	if fed == discover.FederationReferrals && len(s.ard.Peers) > 0 {
		out["referrals"] = s.ard.referrals()
	}
	// Peers are asked for the first page only: their pages cannot be
	// continued by this registry's token (docs/discovery.md "Federated
	// search").
	if fed == discover.FederationAuto && len(s.ard.Peers) > 0 && token == "" {
		results = s.ardFederate(c.Request().Context(), results, q, size)
	}
	out["results"] = results
	if next != "" {
		out["pageToken"] = next
	}
	return c.JSON(http.StatusOK, out)
}

// exploreARD is POST /ard/explore: facets over every agent the caller may
// list that matches the query, from the index's facets (search.Find
// counts them over the whole match, not a page).
func (s *server) exploreARD(c echo.Context) error {
	body, _, err := readBody(c, true)
	if err != nil {
		return err
	}
	if err := ardMembers(body, "", "query", "resultType"); err != nil {
		return err
	}
	q, err := ardQueryOf(body.Get("query"), false)
	if err != nil {
		return err
	}
	rt := body.Get("resultType")
	if rt == nil || rt.Kind != strictjson.Object {
		return ardInvalid("resultType: required, an object with facets")
	}
	if err := ardMembers(rt, "resultType.", "facets"); err != nil {
		return err
	}
	fs := rt.Get("facets")
	if fs == nil || fs.Kind != strictjson.Array || len(fs.Array) == 0 || len(fs.Array) > 16 {
		return ardInvalid("resultType.facets: 1 to 16 facet requests")
	}
	var total int
	var facets search.Facets
	if !q.noneOf {
		one := 1
		sq, err := q.request(one, "").Query(principal(c))
		if err != nil {
			return err
		}
		_, page, err := s.ardFind(c, sq)
		if err != nil {
			return err
		}
		total, facets = page.TotalSize, page.Facets
	}
	out := map[string]any{}
	for _, f := range fs.Array {
		field, limit, minCount, err := ardFacetRequest(f)
		if err != nil {
			return err
		}
		var values []search.FacetValue
		switch field {
		case "type":
			if total > 0 {
				values = []search.FacetValue{{Value: aicatalog.TypeA2ACard, Count: total}}
			}
		case "tags":
			values = facets.Tags
		case "provider":
			values = facets.Providers
		case "trust":
			values = facets.Trust
		case "protocolVersion":
			values = facets.ProtocolVersions
		case "binding":
			values = facets.Bindings
		case "capability":
			values = facets.Capabilities
		default:
			return ardInvalid("resultType.facets: " + clip(field, 64) + " is not a field this registry counts (type, tags, provider, trust, protocolVersion, binding, capability)")
		}
		buckets := []map[string]any{}
		other := 0
		for _, v := range values {
			switch {
			case v.Count < minCount:
			case len(buckets) < limit:
				buckets = append(buckets, map[string]any{"value": v.Value, "count": v.Count})
			default:
				other += v.Count
			}
		}
		fo := map[string]any{"buckets": buckets}
		if other > 0 {
			fo["otherCount"] = other
		}
		out[field] = fo
	}
	return c.JSON(http.StatusOK, map[string]any{"resultType": "facets", "facets": out})
}

// ardFacetRequest reads one element of resultType.facets.
func ardFacetRequest(f *strictjson.Value) (field string, limit, minCount int, err error) {
	if f.Kind != strictjson.Object {
		return "", 0, 0, ardInvalid("resultType.facets: each is an object with field")
	}
	if err := ardMembers(f, "resultType.facets[].", "field", "limit", "minCount"); err != nil {
		return "", 0, 0, err
	}
	if field, err = ardString(f, "field"); err != nil || field == "" {
		return "", 0, 0, ardInvalid("resultType.facets[].field: required, a string")
	}
	limit, minCount = 20, 0
	if v := f.Get("limit"); v != nil {
		n, ok := ardInt(v)
		if !ok || n < 1 || n > 100 {
			return "", 0, 0, ardInvalid("resultType.facets[].limit: an integer from 1 to 100")
		}
		limit = n
	}
	if v := f.Get("minCount"); v != nil {
		n, ok := ardInt(v)
		if !ok || n < 0 {
			return "", 0, 0, ardInvalid("resultType.facets[].minCount: a non-negative integer")
		}
		minCount = n
	}
	return field, limit, minCount, nil
}

// ardQueryOf reads the query object of search (text required) or
// explore (both optional). Filter keys are type and tags, each an array
// of strings or a bare string; another key is refused (ARD lets a registry
// refuse a field it does not filter on).
func ardQueryOf(v *strictjson.Value, needText bool) (ardQuery, error) {
	var q ardQuery
	if v == nil {
		if needText {
			return q, ardInvalid("query.text: required")
		}
		return q, nil
	}
	if v.Kind != strictjson.Object {
		return q, ardInvalid("query: an object with text and filter")
	}
	if err := ardMembers(v, "query.", "text", "filter"); err != nil {
		return q, err
	}
	text, err := ardString(v, "text")
	if err != nil {
		return q, err
	}
	if needText && strings.TrimSpace(text) == "" {
		return q, ardInvalid("query.text: required")
	}
	q.text = text
	f := v.Get("filter")
	if f == nil {
		return q, nil
	}
	if f.Kind != strictjson.Object {
		return q, ardInvalid("query.filter: an object of field paths to values")
	}
	for _, m := range f.Object {
		vals, err := ardStrings(m.Value, "query.filter."+clip(m.Key, 64))
		if err != nil {
			return q, err
		}
		switch m.Key {
		case "type":
			q.noneOf = !listsCards(vals)
		case "tags":
			q.tags = vals
		default:
			return q, ardInvalid("query.filter: " + clip(m.Key, 64) + " is not a field this registry filters on (type, tags)")
		}
	}
	return q, nil
}

// ardMembers refuses a member of v not in known.
func ardMembers(v *strictjson.Value, prefix string, known ...string) error {
	if v == nil || v.Kind != strictjson.Object {
		return ardInvalid("the request body must be a JSON object")
	}
	for _, m := range v.Object {
		if !slices.Contains(known, m.Key) {
			return ardInvalid("unknown field " + prefix + clip(m.Key, 64))
		}
	}
	return nil
}

func ardString(v *strictjson.Value, name string) (string, error) {
	m := v.Get(name)
	if m == nil {
		return "", nil
	}
	if m.Kind != strictjson.String {
		return "", ardInvalid(name + ": must be a string")
	}
	return m.String, nil
}

func ardStrings(v *strictjson.Value, name string) ([]string, error) {
	switch v.Kind {
	case strictjson.String:
		return []string{v.String}, nil
	case strictjson.Array:
		out := make([]string, 0, len(v.Array))
		for _, x := range v.Array {
			if x.Kind != strictjson.String {
				return nil, ardInvalid(name + ": an array of strings")
			}
			out = append(out, x.String)
		}
		return out, nil
	}
	return nil, ardInvalid(name + ": a string or an array of strings")
}

func ardInt(v *strictjson.Value) (int, bool) {
	if v.Kind != strictjson.Number {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Number, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// ardCharge spends n more units of the caller's read budget, the part of
// a page's cost (ratelimit.ReadCost) beyond the unit limitReads spent:
// the same budget and key as every read (docs/security.md "Rate limits").
func (s *server) ardCharge(c echo.Context, n int) error {
	if n <= 0 {
		return nil
	}
	key, detail, limited := s.readKey(c)
	if !limited {
		return nil
	}
	if ok, wait := s.limits.ReadN(key, n, s.now()); !ok {
		return rateLimited(wait, detail)
	}
	return nil
}

// ardInvalid is ARD's INVALID_ARGUMENT: validation-failed, rendered in
// ARD's envelope under /ard.
func ardInvalid(msg string) *problem { return newProblem("validation-failed", msg) }

// ardErrorCodes are ARD's error codes by HTTP status (docs/discovery.md
// "ARD registry API").
var ardErrorCodes = map[int]string{
	http.StatusBadRequest:            "INVALID_ARGUMENT",
	http.StatusUnauthorized:          "UNAUTHENTICATED",
	http.StatusForbidden:             "PERMISSION_DENIED",
	http.StatusNotFound:              "NOT_FOUND",
	http.StatusMethodNotAllowed:      "METHOD_NOT_ALLOWED",
	http.StatusRequestEntityTooLarge: "INVALID_ARGUMENT",
	http.StatusUnsupportedMediaType:  "INVALID_ARGUMENT",
	http.StatusTooManyRequests:       "RATE_LIMIT_EXCEEDED",
	http.StatusNotImplemented:        "NOT_IMPLEMENTED",
	http.StatusServiceUnavailable:    "UNAVAILABLE",
}

// isARD reports whether a request is for the ARD registry API.
func isARD(c echo.Context) bool {
	p := c.Request().URL.Path
	return p == discover.ARDPath || strings.HasPrefix(p, discover.ARDPath+"/")
}

// writeARDError writes p in ARD's error envelope {"errorCode",
// "message"}: the status and headers are the problem's, the code ARD's for
// the status, the message the problem's detail.
func writeARDError(c echo.Context, p *problem) {
	h := c.Response().Header()
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retryAfter))
	}
	if p.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="cardex"`)
	}
	code, ok := ardErrorCodes[p.Status]
	if !ok {
		code = "INTERNAL_ERROR"
	}
	msg := p.Detail
	if msg == "" {
		msg = p.Title
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(p.Status)
		return
	}
	_ = c.JSON(p.Status, map[string]string{"errorCode": code, "message": msg})
}
