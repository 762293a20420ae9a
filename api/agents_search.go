package api

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// searchAgents is GET /api/v1/agents through the index, by search.Find: the
// one path every face lists agents by (the index picks the ids, SQL decides
// what the caller sees now, docs/threats.md G.72).
func (s *server) searchAgents(c echo.Context) error {
	r, err := searchParams(c, true)
	if err != nil {
		return err
	}
	page, err := search.Find(c.Request().Context(), s.search, summaryLister{s.svc}, r.caller, r.query)
	if err != nil {
		return err
	}
	return writeSearchPage(c, page, strings.TrimSpace(r.query.Q) != "")
}

// summaryLister lists a page's agents with their stored card summaries
// (registry.Service.ListedSummaries), which writeSearchPage copies as they
// are; GET /skills uses it too, for the listing re-check alone.
type summaryLister struct{ svc *registry.Service }

func (l summaryLister) Listed(ctx context.Context, p registry.Principal, ids []string) ([]registry.Agent, error) {
	return l.svc.ListedSummaries(ctx, p, ids)
}
