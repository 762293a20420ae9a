package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// getCard is GET /api/v1/agents/{id}/card: the current version's bytes
// exactly as fetched (docs/design.md principle 5), so anyone can re-verify the
// signature. The strong ETag is the quoted SHA-256 of those bytes.
//
// An agent may render its card per A2A-Version (a2a-js with legacy
// compatibility serves a v0.3 card unless asked for 1.0); the crawler then
// keeps both renderings. A request that asks for v0.3 — A2A-Version 0.3, or
// no A2A-Version at all, which A2A reads as 0.3 — gets the agent's v0.3
// bytes when there are any, every other request the v1 bytes
// (docs/verification.md "Serving cards"). Either is as fetched and
// verifies as fetched.
func (s *server) getCard(c echo.Context) error {
	raw, sum, _, err := s.svc.CardRendering(c.Request().Context(), principal(c), c.Param("id"), wantsV03(c.Request().Header))
	if err != nil {
		return err
	}
	etag := `"` + sum + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "A2A-Version")
	if etagMatches(c.Request().Header.Values("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, raw)
}

// wantsV03 reads the request's A2A-Version: absent or 0.x (Major.Minor,
// patch ignored) asks for the v0.3 rendering.
func wantsV03(h http.Header) bool {
	v := strings.TrimSpace(h.Get("A2A-Version"))
	return v == "" || strings.HasPrefix(v, "0.")
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
