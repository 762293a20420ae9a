package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// getCard is GET /api/v1/agents/{id}/card: the current version's bytes
// exactly as fetched (DESIGN.md principle 5), so anyone can re-verify the
// signature. The strong ETag is the quoted SHA-256 of those bytes.
func (s *server) getCard(c echo.Context) error {
	raw, sum, err := s.svc.Card(c.Request().Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	etag := `"` + sum + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if etagMatches(c.Request().Header.Values("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, raw)
}

// etagMatches is If-None-Match's weak comparison (RFC 9110 §13.1.2): "*"
// or any listed tag equal to etag once W/ is ignored.
func etagMatches(headers []string, etag string) bool {
	for _, h := range headers {
		for _, t := range strings.Split(h, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == etag {
				return true
			}
		}
	}
	return false
}
