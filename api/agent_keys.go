package api

import (
	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/strictjson"
)

// pinKeys is PUT /api/v1/agents/{id}/keys with a JWK Set (admin). The bytes
// go to the registry as sent (after the strict parse proved them one JSON
// object); the registry vets the keys.
func (s *server) pinKeys(c echo.Context) error {
	body, raw, err := readBody(c, true, mediaJSON, "application/jwk-set+json")
	if err != nil {
		return err
	}
	if body.Kind != strictjson.Object {
		return fieldProblem("", "type", "the request body must be a JWK Set object")
	}
	if keys := body.Get("keys"); keys == nil || keys.Kind != strictjson.Array {
		return fieldProblem("/keys", "required", "a JWK Set needs a keys array")
	}
	a, err := s.svc.PinKeys(c.Request().Context(), principal(c), c.Param("id"), raw)
	return writeAgentOK(c, a, err)
}

// unpinKeys is DELETE /api/v1/agents/{id}/keys (admin).
func (s *server) unpinKeys(c echo.Context) error {
	a, err := s.svc.UnpinKeys(c.Request().Context(), principal(c), c.Param("id"))
	return writeAgentOK(c, a, err)
}
