package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// cors lets any origin use the read-only endpoints without credentials
// (mirrors, browser clients). Writes get no CORS headers, so a browser on
// another origin can never submit or curate; the preflight for a path that
// also has writes (POST /agents) only admits GET and HEAD.
func cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Expose-Headers", "ETag, Retry-After, X-Request-Id")
		case http.MethodOptions:
			allow, _ := c.Get(echo.ContextKeyHeaderAllow).(string)
			want := c.Request().Header.Get("Access-Control-Request-Method")
			if (want == http.MethodGet || want == http.MethodHead) && strings.Contains(allow, http.MethodGet) {
				h.Set("Access-Control-Allow-Origin", "*")
				h.Set("Access-Control-Allow-Methods", "GET, HEAD")
				h.Set("Access-Control-Allow-Headers", "Authorization, If-None-Match")
				h.Set("Access-Control-Max-Age", "600")
			}
		}
		return next(c)
	}
}
