package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// routes is the API's one route table (CONTRIBUTING.md). Every route here
// is documented in openapi.yaml; the tests check each response against it.
func (s *server) routes(e *echo.Echo) {
	// Middleware runs for every request, matched or not; a Group with its
	// own middleware would register catch-all routes that turn 405s into
	// 404s, so the API-only steps check the path themselves.
	e.Use(s.observe, cors, apiOnly(s.authenticate), apiOnly(s.limitReads))

	get(e, "/healthz", s.healthz)
	get(e, "/readyz", s.readyz)
	get(e, "/problems/:slug", problemPage)

	v1 := e.Group("/api/v1")
	get(v1, "/openapi.yaml", openAPIDocument)

	// Operations that need a token say so here: the caller is authorized
	// before its body or parameters are read (registry.Authorize), so an
	// anonymous caller gets 401 and a token of another role 403, whatever
	// the request holds. The registry checks again, and checks the host of
	// the agent for publisher tokens.
	admin, publisher, token := s.needs(registry.NeedAdmin), s.needs(registry.NeedPublisher), s.needs(registry.NeedToken)

	get(v1, "/agents", s.listAgents)
	v1.POST("/agents", s.submitAgent)
	v1.POST("/agents/bulk", s.bulkAct, admin)
	get(v1, "/agents/:id", s.getAgent)
	v1.PATCH("/agents/:id", s.updateAgent, admin)
	v1.DELETE("/agents/:id", s.removeAgent, s.needs(registry.ActionNeed(registry.ActionRemove)))
	get(v1, "/agents/:id/card", s.getCard)
	get(v1, "/agents/:id/versions", s.listVersions)
	get(v1, "/agents/:id/versions/:seq", s.getVersion)
	for _, a := range []registry.Action{registry.ActionApprove, registry.ActionReject, registry.ActionSuspend, registry.ActionRestore} {
		v1.POST("/agents/:id/"+string(a), s.act(a), s.needs(registry.ActionNeed(a)))
	}
	v1.POST("/agents/:id/crawl", s.crawlAgent, publisher)
	v1.PUT("/agents/:id/keys", s.pinKeys, admin)
	v1.DELETE("/agents/:id/keys", s.unpinKeys, admin)
	get(v1, "/agents/:id/fetches", s.listFetches, publisher)
	get(v1, "/agents/:id/probes", s.listProbes)
	v1.PUT("/agents/:id/probing", s.setProbing, admin)
	get(v1, "/changes", s.listChanges)
	get(v1, "/audit", s.listAudit, admin)
	get(v1, "/audit/export", s.exportAudit, admin)
	get(v1, "/catalogs", s.listCatalogs, admin)
	v1.POST("/catalogs/:id/pause", s.catalogChange(s.svc.PauseCatalog), admin)
	v1.POST("/catalogs/:id/resume", s.catalogChange(s.svc.ResumeCatalog), admin)
	v1.DELETE("/catalogs/:id", s.removeCatalog, admin)
	get(v1, "/skills", s.listSkills)
	get(v1, "/tags", s.listTags)
	v1.POST("/admin/reindex", s.adminReindex, admin)
	v1.POST("/claims", s.createClaim)
	v1.POST("/claims/:id/verify", s.verifyClaim)
	get(v1, "/tokens", s.listTokens, token)
	v1.DELETE("/tokens/:id", s.revokeToken, token)

	// The ARD registry API (docs/discovery.md "ARD registry API").
	get(e, "/ard/agents", s.listARD)
	get(e, "/ard/agents/:identifier", s.getARD)
	e.POST("/ard/search", s.searchARD)
	e.POST("/ard/explore", s.exploreARD)
}

// get registers a read route for GET and HEAD (net/http drops a HEAD
// response's body).
func get(r interface {
	Match([]string, string, echo.HandlerFunc, ...echo.MiddlewareFunc) []*echo.Route
}, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	r.Match([]string{http.MethodGet, http.MethodHead}, path, h, mw...)
}

// apiOnly applies mw to requests under /api/ and the ARD registry API
// only: probes and problem pages need neither credentials nor rate limits.
func apiOnly(mw echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withMW := mw(next)
		return func(c echo.Context) error {
			if strings.HasPrefix(c.Request().URL.Path, "/api/") || isARD(c) {
				return withMW(c)
			}
			return next(c)
		}
	}
}
