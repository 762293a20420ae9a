package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// listTokens is GET /api/v1/tokens: every token for an admin, the caller's
// own token for any other token (a publisher sees and can end itself).
func (s *server) listTokens(c echo.Context) error {
	if err := checkParams(c.QueryParams()); err != nil {
		return err
	}
	ts, err := s.svc.TokensOf(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"tokens": ts})
}

// revokeToken is DELETE /api/v1/tokens/{id}: admins revoke any token, any
// other token only itself. Revoking a revoked token is 204 again.
func (s *server) revokeToken(c echo.Context) error {
	if err := s.svc.RevokeTokenAs(c.Request().Context(), principal(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
