package api

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// A search page is the API's hottest answer. writeSearchPage writes the
// bytes writeJSON writes for the same page of listItems (the tests compare
// them), with each summary copied from the stored one that
// registry.Service.ListedSummaries hands out and the rest appended without
// reflection.

// summaryMembers appends the members of a listed agent's JSON that come
// from its card: "summary" (agentcard.Summary, null without a card), then
// "cardShape" and "protocolVersions" when set — listItem's last three
// fields. They come from a.CardView when ListedSummaries set it, else
// from a.Card.
func summaryMembers(dst []byte, a *registry.Agent) ([]byte, error) {
	dst = appendJSONKey(dst, "summary", true)
	var shape string
	var pvs []string
	switch {
	case a.CardView != nil && a.CardView.Summary != nil:
		dst = append(dst, a.CardView.Summary...)
		shape, pvs = a.CardView.Shape, a.CardView.ProtocolVersions
	case a.Card != nil:
		b, err := a.Card.SummaryJSON()
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
		shape, pvs = a.Card.Shape, a.Card.ProtocolVersions
	default:
		return append(dst, "null"...), nil
	}
	if shape != "" {
		dst = appendJSONKey(dst, "cardShape", false)
		dst = appendJSONString(dst, shape)
	}
	if len(pvs) > 0 {
		dst = appendJSONKey(dst, "protocolVersions", false)
		dst = appendJSONStrings(dst, pvs)
	}
	return dst, nil
}

// appendAgentRecord appends the JSON object of listJSON(a) extended by
// searchAgent's matches. withMatches says q was given.
func appendAgentRecord(dst []byte, a *registry.Agent, withMatches bool, matches []search.Match) ([]byte, error) {
	dst = append(dst, '{')
	dst = appendJSONKey(dst, "id", true)
	dst = appendJSONString(dst, a.ID)
	dst = appendJSONKey(dst, "cardUrl", false)
	dst = appendJSONString(dst, a.CardURL)
	dst = appendJSONKey(dst, "fetchedUrl", false)
	dst = appendJSONString(dst, a.FetchedURL)
	dst = appendJSONKey(dst, "host", false)
	dst = appendJSONString(dst, a.Host)
	dst = appendJSONKey(dst, "status", false)
	dst = appendJSONString(dst, string(a.Status))
	dst = appendJSONKey(dst, "visibility", false)
	dst = appendJSONString(dst, string(a.Visibility))
	if len(a.Groups) > 0 {
		dst = appendJSONKey(dst, "groups", false)
		dst = appendJSONStrings(dst, a.Groups)
	}
	dst = appendJSONKey(dst, "health", false)
	dst = appendJSONString(dst, string(a.Health))
	dst = appendJSONKey(dst, "trust", false)
	dst = appendJSONString(dst, string(a.Trust))
	dst = appendJSONKey(dst, "needsReview", false)
	dst = appendJSONBool(dst, a.NeedsReview)
	dst = appendJSONKey(dst, "createdAt", false)
	dst = appendJSONTime(dst, a.CreatedAt)
	dst = appendJSONKey(dst, "updatedAt", false)
	dst = appendJSONTime(dst, a.UpdatedAt)
	dst = appendJSONKey(dst, "lastFetchedAt", false)
	dst = appendJSONTimePtr(dst, a.LastFetchedAt)
	dst = appendJSONKey(dst, "lastChangedAt", false)
	dst = appendJSONTimePtr(dst, a.LastChangedAt)
	dst = appendJSONKey(dst, "nextFetchAt", false)
	dst = appendJSONTimePtr(dst, a.NextFetchAt)
	dst = appendJSONKey(dst, "lastError", false)
	if e := a.LastError; e == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONKey(append(dst, '{'), "at", true)
		dst = appendJSONTime(dst, e.At)
		dst = appendJSONKey(dst, "class", false)
		dst = appendJSONString(dst, e.Class)
		if e.HTTPStatus != 0 {
			dst = appendJSONKey(dst, "httpStatus", false)
			dst = appendJSONInt(dst, int64(e.HTTPStatus))
		}
		dst = appendJSONKey(dst, "message", false)
		dst = append(appendJSONString(dst, e.Message), '}')
	}
	dst = appendJSONKey(dst, "lastSuccessAt", false)
	dst = appendJSONTimePtr(dst, a.LastSuccessAt)
	dst = appendJSONKey(dst, "failingSince", false)
	dst = appendJSONTimePtr(dst, a.FailingSince)
	dst = appendJSONKey(dst, "consecutiveFailures", false)
	dst = appendJSONInt(dst, int64(a.ConsecutiveFailures))
	dst = appendJSONKey(dst, "versionSeq", false)
	dst = appendJSONInt(dst, a.VersionSeq)
	dst = appendJSONKey(dst, "signatures", false)
	dst = append(dst, '[')
	for i := range a.Signatures {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSignature(dst, &a.Signatures[i])
	}
	dst = append(dst, ']')
	if len(a.NotCovered) > 0 {
		dst = appendJSONKey(dst, "notCovered", false)
		dst = appendJSONStrings(dst, a.NotCovered)
	}
	dst = appendJSONKey(dst, "liveness", false)
	var err error
	if dst, err = appendLiveness(dst, a.Liveness); err != nil {
		return nil, err
	}
	if a.Catalog != "" {
		dst = appendJSONKey(dst, "catalog", false)
		dst = appendJSONString(dst, a.Catalog)
	}
	if a.CatalogInline {
		dst = appendJSONKey(dst, "catalogInline", false)
		dst = appendJSONBool(dst, true)
	}
	if a.CatalogMissing {
		dst = appendJSONKey(dst, "catalogMissing", false)
		dst = appendJSONBool(dst, true)
	}
	if len(a.CatalogQueries) > 0 {
		dst = appendJSONKey(dst, "catalogQueries", false)
		dst = appendJSONStrings(dst, a.CatalogQueries)
	}
	if src := a.CatalogSource; src != nil {
		dst = appendJSONKey(dst, "catalogSource", false)
		dst = appendCatalogSource(dst, src)
	}
	if a.AutoApproveHeld != "" {
		dst = appendJSONKey(dst, "autoApproveHeld", false)
		dst = appendJSONString(dst, a.AutoApproveHeld)
	}
	if dst, err = summaryMembers(append(dst, ','), a); err != nil {
		return nil, err
	}
	if withMatches {
		dst = appendJSONKey(dst, "matches", false)
		dst = append(dst, '[')
		for i, m := range matches {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONKey(append(dst, '{'), "skillId", true)
			dst = appendJSONString(dst, m.SkillID)
			dst = appendJSONKey(dst, "field", false)
			dst = appendJSONString(dst, m.Field)
			dst = appendJSONKey(dst, "fragments", false)
			if m.Fragments == nil {
				dst = append(dst, '[', ']')
			} else {
				dst = appendJSONStrings(dst, m.Fragments)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

func appendSignature(dst []byte, s *registry.SignatureResult) []byte {
	dst = appendJSONKey(append(dst, '{'), "index", true)
	dst = appendJSONInt(dst, int64(s.Index))
	dst = appendJSONKey(dst, "kid", false)
	dst = appendJSONString(dst, s.Kid)
	dst = appendJSONKey(dst, "alg", false)
	dst = appendJSONString(dst, s.Alg)
	dst = appendJSONKey(dst, "keySource", false)
	dst = appendJSONString(dst, s.KeySource)
	if s.Profile != "" {
		dst = appendJSONKey(dst, "profile", false)
		dst = appendJSONString(dst, s.Profile)
	}
	dst = appendJSONKey(dst, "status", false)
	dst = appendJSONString(dst, s.Status)
	if s.Reason != "" {
		dst = appendJSONKey(dst, "reason", false)
		dst = appendJSONString(dst, s.Reason)
	}
	if s.Thumbprint != "" {
		dst = appendJSONKey(dst, "thumbprint", false)
		dst = appendJSONString(dst, s.Thumbprint)
	}
	if len(s.Unsigned) > 0 {
		dst = appendJSONKey(dst, "unsigned", false)
		dst = appendJSONStrings(dst, s.Unsigned)
	}
	return append(dst, '}')
}

// appendLiveness appends the list form of the liveness object (state,
// since, failingSince, probing); the detail of one agent's record, which
// lists never carry, goes through encoding/json.
func appendLiveness(dst []byte, l *registry.Liveness) ([]byte, error) {
	switch {
	case l == nil:
		return append(dst, "null"...), nil
	case l.LastProbeAt != nil || l.Uptime != nil || l.P50MS != nil || len(l.Interfaces) > 0 || len(l.Days) > 0:
		b, err := json.Marshal(l)
		return append(dst, b...), err
	}
	dst = appendJSONKey(append(dst, '{'), "state", true)
	dst = appendJSONString(dst, string(l.State))
	dst = appendJSONKey(dst, "since", false)
	dst = appendJSONTimePtr(dst, l.Since)
	dst = appendJSONKey(dst, "failingSince", false)
	dst = appendJSONTimePtr(dst, l.FailingSince)
	dst = appendJSONKey(dst, "probing", false)
	return append(appendJSONBool(dst, l.Probing), '}'), nil
}

// pageBuffers hold the pages being written: a page is about 80 KB, and a
// buffer grown to fit one serves the next request instead of being grown
// again and collected.
var pageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 128<<10); return &b }}

// maxPooledPage is the largest buffer returned to pageBuffers; a rare huge
// page is left to the collector.
const maxPooledPage = 1 << 20

// writeSearchPage writes the page as writeJSON(c, 200, searchPage{…}) would.
func writeSearchPage(c echo.Context, page *search.Page, withMatches bool) error {
	facets, err := json.Marshal(page.Facets.Lists())
	if err != nil {
		return err
	}
	buf := pageBuffers.Get().(*[]byte)
	dst := (*buf)[:0]
	dst = append(dst, `{"agents":[`...)
	for i := range page.Agents {
		if i > 0 {
			dst = append(dst, ',')
		}
		f := &page.Agents[i]
		if dst, err = appendAgentRecord(dst, &f.Agent, withMatches, f.Matches); err != nil {
			return err
		}
	}
	dst = append(dst, ']')
	dst = appendJSONKey(dst, "nextPageToken", false)
	dst = appendJSONString(dst, page.NextPageToken)
	dst = appendJSONKey(dst, "totalSize", false)
	dst = appendJSONInt(dst, int64(page.TotalSize))
	dst = appendJSONKey(dst, "facets", false)
	dst = append(dst, facets...)
	dst = append(dst, '}')
	// Blob has written dst to the response when it returns.
	err = c.Blob(http.StatusOK, echo.MIMEApplicationJSON, dst)
	if cap(dst) <= maxPooledPage {
		*buf = dst[:0]
		pageBuffers.Put(buf)
	}
	return err
}

// appendCatalogSource writes an agent's provenance as json.Marshal would
// (registry.CatalogSource).
func appendCatalogSource(dst []byte, src *registry.CatalogSource) []byte {
	dst = appendJSONKey(append(dst, '{'), "document", true)
	dst = appendJSONString(dst, src.Document)
	dst = appendJSONKey(dst, "identifier", false)
	dst = appendJSONString(dst, src.Identifier)
	if p := src.Publisher; p != nil {
		dst = appendJSONKey(dst, "publisher", false)
		dst = appendJSONKey(append(dst, '{'), "identifier", true)
		dst = appendJSONString(dst, p.Identifier)
		dst = appendJSONKey(dst, "displayName", false)
		dst = appendJSONString(dst, p.DisplayName)
		dst = append(dst, '}')
	}
	if src.URN != "" {
		dst = appendJSONKey(dst, "urn", false)
		dst = appendJSONString(dst, src.URN)
	}
	return append(dst, '}')
}
