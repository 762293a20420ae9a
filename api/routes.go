package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

// routes is the API's one route table (STYLE.md habit 2). Every route here
// is documented in openapi.yaml; the tests check each response against it.
func (s *server) routes(e *echo.Echo) {
	e.Use(s.observe, cors)
	e.RouteNotFound("/*", notFound)

	get(e, "/healthz", s.healthz)
	get(e, "/readyz", s.readyz)
	get(e, "/problems/:slug", problemPage)

	v1 := e.Group("/api/v1", s.authenticate, s.limitReads)
	v1.RouteNotFound("/*", notFound)
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
	get(v1, "/changes", s.listChanges)
	get(v1, "/audit", s.listAudit)
}

func notFound(echo.Context) error { return newProblem("not-found", "no such resource") }

// get registers a read route for GET and HEAD (net/http drops a HEAD
// response's body).
func get(r interface {
	Match([]string, string, echo.HandlerFunc, ...echo.MiddlewareFunc) []*echo.Route
}, path string, h echo.HandlerFunc) {
	r.Match([]string{http.MethodGet, http.MethodHead}, path, h)
}
