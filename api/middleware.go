package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
)

const (
	keyRequestID = "cardex.request_id"
	keyPrincipal = "cardex.principal"
)

// requestID is the id of the request in logs, in X-Request-Id and in the
// detail of an internal error.
func requestID(c echo.Context) string {
	id, _ := c.Get(keyRequestID).(string)
	return id
}

// observe assigns the request id, recovers panics and writes the access
// log. It runs outermost so it sees the final status. The log names the
// route template, never the raw URL: query strings may carry secrets
// (docs/threats.md I.78) and paths carry client-chosen bytes (I.81).
func (s *server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		start := time.Now()
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Set(keyRequestID, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			err = next(c)
		}()
		if err != nil {
			// Render now, so the status logged is the one sent.
			s.handleError(err, c)
		}
		elapsed := time.Since(start)
		if s.metrics != nil {
			s.metrics(c.Path(), c.Response().Status, elapsed)
		}
		level := slog.LevelInfo
		if c.Response().Status >= 500 {
			level = slog.LevelWarn
		}
		s.log.LogAttrs(c.Request().Context(), level, "http request",
			slog.String("method", c.Request().Method),
			slog.String("route", c.Path()),
			slog.Int("status", c.Response().Status),
			slog.Int64("bytes", c.Response().Size),
			slog.Duration("duration", elapsed),
			slog.String("request_id", id),
			slog.String("role", roleName(principal(c).Role)),
		)
		return nil
	}
}

// validRequestID accepts a caller's id only if it is short and plain, so
// it cannot forge log lines.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
