package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
)

// selfPublish is the demo's host that claims itself (docs/claims.md): it
// asks for a host claim, serves the token at the claim URL, verifies the
// claim through the server's own crawler fetcher and submits its agent
// with the publisher token it receives. Under --auto-approve claimed or
// verified that agent is approved at its first good fetch, before the demo
// admin gets to it; otherwise the demo admin approves it with the rest.
// On a restart the agent is registered already: the new token is revoked
// by itself, so each start leaves at most one live demo publisher token.
func (d *demoFleet) selfPublish(ctx context.Context, svc *registry.Service) (string, error) {
	host := strings.TrimPrefix(d.selfHost.Origin(), "http://")
	c, err := svc.CreateHostClaim(ctx, registry.ClaimRequest{Host: host, Scheme: "http"})
	if err != nil {
		return "", fmt.Errorf("demo: claim %s: %w", host, err)
	}
	if _, err := d.fleet.TryAdd(agentfleet.Agent{Behavior: agentfleet.Normal, Host: d.selfHost,
		Path: registry.ClaimPath + c.Token, Card: []byte(c.Token)}); err != nil {
		return "", fmt.Errorf("demo: serving the claim token: %w", err)
	}
	ct, err := svc.VerifyHostClaim(ctx, c.ID)
	if err != nil {
		return "", fmt.Errorf("demo: verifying the claim on %s: %w", host, err)
	}
	pub, err := svc.Authenticate(ctx, ct.PublisherToken)
	if err != nil {
		return "", fmt.Errorf("demo: the claim's publisher token: %w", err)
	}
	a, err := svc.Submit(ctx, pub, d.self.URL(), registry.VisibilityPublic)
	var dup *registry.DuplicateError
	switch {
	case err == nil:
		return a.ID, nil
	case errors.As(err, &dup):
		if err := svc.RevokeTokenAs(ctx, pub, pub.TokenID); err != nil {
			return "", fmt.Errorf("demo: revoking the spare publisher token: %w", err)
		}
		return dup.AgentID, nil
	}
	return "", fmt.Errorf("demo: submitting %s as its publisher: %w", d.self.URL(), err)
}
