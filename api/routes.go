package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// routes is the API's one route table (STYLE.md habit 2). Every route here
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

	get(v1, "/agents", s.listAgents)
	v1.POST("/agents", s.submitAgent)
	get(v1, "/agents/:id", s.getAgent)
	v1.PATCH("/agents/:id", s.updateAgent)
	v1.DELETE("/agents/:id", s.removeAgent)
	get(v1, "/agents/:id/card", s.getCard)
	get(v1, "/agents/:id/versions", s.listVersions)
	get(v1, "/agents/:id/versions/:seq", s.getVersion)
	v1.POST("/agents/:id/approve", s.act(registry.ActionApprove))
	v1.POST("/agents/:id/reject", s.act(registry.ActionReject))
	v1.POST("/agents/:id/suspend", s.act(registry.ActionSuspend))
	v1.POST("/agents/:id/restore", s.act(registry.ActionRestore))
	v1.POST("/agents/:id/crawl", s.crawlAgent)
	v1.PUT("/agents/:id/keys", s.pinKeys)
	v1.DELETE("/agents/:id/keys", s.unpinKeys)
	get(v1, "/agents/:id/fetches", s.listFetches)
	get(v1, "/agents/:id/probes", s.listProbes)
	v1.PUT("/agents/:id/probing", s.setProbing)
	get(v1, "/changes", s.listChanges)
	get(v1, "/audit", s.listAudit)
	get(v1, "/catalogs", s.listCatalogs)
	get(v1, "/skills", s.listSkills)
	get(v1, "/tags", s.listTags)
	v1.POST("/admin/reindex", s.adminReindex)
	v1.POST("/claims", s.createClaim)
	v1.POST("/claims/:id/verify", s.verifyClaim)
	get(v1, "/tokens", s.listTokens)
	v1.DELETE("/tokens/:id", s.revokeToken)
}

// get registers a read route for GET and HEAD (net/http drops a HEAD
// response's body).
func get(r interface {
	Match([]string, string, echo.HandlerFunc, ...echo.MiddlewareFunc) []*echo.Route
}, path string, h echo.HandlerFunc) {
	r.Match([]string{http.MethodGet, http.MethodHead}, path, h)
}

// apiOnly applies mw to requests under /api/ only: probes and problem pages
// need neither credentials nor rate limits.
func apiOnly(mw echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withMW := mw(next)
		return func(c echo.Context) error {
			if strings.HasPrefix(c.Request().URL.Path, "/api/") {
				return withMW(c)
			}
			return next(c)
		}
	}
}
