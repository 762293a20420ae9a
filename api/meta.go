package api

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// OpenAPI is the document the server implements, served at
// /api/v1/openapi.yaml and used by the tests to validate every response.
//
//go:embed openapi.yaml
var OpenAPI []byte

func openAPIDocument(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", OpenAPI)
}

// problemPage serves the explanation at a problem's type URI.
func problemPage(c echo.Context) error {
	t, ok := problemTypes[c.Param("slug")]
	if !ok {
		return newProblem("not-found", "no such problem type")
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(t.title+"\n\n"+t.explain+"\n"))
}

// healthz answers while the process serves HTTP.
func (s *server) healthz(c echo.Context) error {
	return writeJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// readyTimeout bounds the readiness probe so a hung database answers 503
// instead of holding the prober.
const readyTimeout = 2 * time.Second

// readyz is 200 when the database answers, its migrations are current and,
// with Config.SearchReady, the search index is built and keeps up.
func (s *server) readyz(c echo.Context) error {
	if s.ready == nil {
		return writeJSON(c, http.StatusOK, map[string]string{"status": "ready"})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if err := s.ready.Ping(ctx); err != nil {
		s.log.Warn("not ready: database unreachable", "err", err)
		return notReady("the database is unreachable")
	}
	current, err := s.ready.MigrationsCurrent(ctx)
	if err != nil || !current {
		s.log.Warn("not ready: migrations not current", "err", err)
		return notReady("the database schema is not current")
	}
	if s.searchReady != nil {
		if err := s.searchReady(ctx); err != nil {
			s.log.Warn("not ready: search index", "err", err)
			return notReady("the search index is not ready: " + clip(err.Error(), 300))
		}
	}
	return writeJSON(c, http.StatusOK, map[string]string{"status": "ready"})
}

func notReady(detail string) *problem {
	p := newProblem("unavailable", detail)
	p.retryAfter = unavailableRetry
	return p
}
