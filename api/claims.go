package api

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/cardexhq/cardex/registry"
)

type claimRequest struct {
	Host   *string `json:"host"`
	Scheme string  `json:"scheme"`
}

// createClaim is POST /api/v1/claims {"host", "scheme"}: issue a host claim
// (docs/claims.md). Anyone may ask; what it costs is limitClaim's, and the
// registry caps each requester's unverified claims per host.
func (s *server) createClaim(c echo.Context) error {
	body, raw, err := readBody(c, true)
	if err != nil {
		return err
	}
	var req claimRequest
	if err := decodeObject(body, raw, &req, "host", "scheme"); err != nil {
		return err
	}
	if req.Host == nil {
		return fieldProblem("/host", "required", "host is required")
	}
	requester, err := s.limitClaim(c, "claims")
	if err != nil {
		return err
	}
	cl, err := s.svc.CreateHostClaim(c.Request().Context(), registry.ClaimRequest{Host: *req.Host, Scheme: req.Scheme, Requester: requester})
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Location", s.baseURL+"/api/v1/claims/"+url.PathEscape(cl.ID))
	return writeJSON(c, http.StatusCreated, cl)
}

// verifyClaim is POST /api/v1/claims/{id}/verify: fetch the claim URL
// through the crawler and, when it answers the token, return the publisher
// token once. Each attempt is an outbound fetch: it costs what limitClaim
// says, and the registry spaces the attempts of one claim and the crawler
// caps claim fetches in flight per host.
func (s *server) verifyClaim(c echo.Context) error {
	if err := emptyBody(c); err != nil {
		return err
	}
	if _, err := s.limitClaim(c, "claim verifications"); err != nil {
		return err
	}
	ct, err := s.svc.VerifyHostClaim(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	// The token is shown once: nothing may keep a copy of this answer.
	c.Response().Header().Set("Cache-Control", "no-store")
	return writeJSON(c, http.StatusOK, map[string]any{
		"host": ct.Host, "publisherToken": ct.PublisherToken, "expiresAt": ct.Token.ExpiresAt, "tokenId": ct.Token.ID,
	})
}
