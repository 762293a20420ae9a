package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type reindexResult struct {
	Status     string `json:"status"`
	DurationMS int64  `json:"durationMs"`
}

// adminReindex is POST /api/v1/admin/reindex {} (admin): rebuild the running
// server's search index from SQL (docs/api.md). It answers when the new
// generation is live; queries keep being answered by the old one meanwhile.
// The rebuild is not tied to the request: a client that gives up does not
// throw away a half-built index (the server's shutdown still stops it).
func (s *server) adminReindex(c echo.Context) error {
	if principal(c).Role != registry.RoleAdmin {
		return registry.ErrForbidden
	}
	if err := emptyBody(c); err != nil {
		return err
	}
	if s.reindex == nil {
		return errNoReindex()
	}
	// A rebuild of a large catalogue outlasts the server's write timeout
	// (a minute for 100,000 agents); lift it for this one response so the
	// admin hears the outcome. Not every ResponseWriter supports deadlines
	// (httptest's recorder does not): then there is none to lift.
	_ = http.NewResponseController(c.Response().Writer).SetWriteDeadline(time.Time{})
	start := time.Now()
	if err := s.reindex(context.WithoutCancel(c.Request().Context())); err != nil {
		return err
	}
	s.log.Info("search index rebuilt", "request_id", requestID(c))
	return writeJSON(c, http.StatusOK, reindexResult{Status: "rebuilt", DurationMS: time.Since(start).Milliseconds()})
}
