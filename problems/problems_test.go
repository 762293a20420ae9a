package problems_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/cardexhq/cardex/identity"
	"github.com/cardexhq/cardex/problems"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		err    error
		slug   string
		status int
	}{
		{registry.ErrNotFound, problems.NotFound, 404},
		{fmt.Errorf("wrapped: %w", registry.ErrForbidden), problems.Forbidden, 403},
		{&registry.URLError{Code: registry.URLCodeReserved, Reason: "x"}, problems.ReservedAddress, 400},
		{&registry.URLError{Code: registry.URLCodeInvalid, Reason: "x"}, problems.InvalidURL, 400},
		{&registry.DuplicateError{AgentID: "a"}, problems.DuplicateAgent, 409},
		{search.ErrClosed, problems.Unavailable, 503},
		{search.ErrNotReady, problems.Unavailable, 503},
		{search.ErrInvalidPageToken, problems.ValidationFailed, 400},
		{registry.ErrUnavailable, problems.Unavailable, 503},
	} {
		slug, ok := problems.Of(c.err)
		if !ok || slug != c.slug || problems.Status(slug) != c.status {
			t.Errorf("%v: %s %t (status %d), want %s %d", c.err, slug, ok, problems.Status(slug), c.slug, c.status)
		}
	}
	if slug, ok := problems.Of(errors.New("pq: connection refused")); ok || slug != problems.InternalError || problems.Status(slug) != http.StatusInternalServerError {
		t.Errorf("unknown error: %s %t", slug, ok)
	}
	// Every reason a bearer JWT is refused for has its own 401 type.
	for _, reason := range identity.Reasons {
		slug, ok := problems.Of(fmt.Errorf("wrapped: %w", &identity.TokenError{Reason: reason}))
		if !ok || slug != problems.TokenPrefix+reason || problems.Status(slug) != http.StatusUnauthorized {
			t.Errorf("reason %s: %s %t (status %d)", reason, slug, ok, problems.Status(slug))
		}
	}
	if slug, _ := problems.Of(fmt.Errorf("%w: down", identity.ErrProvider)); slug != problems.IdentityUnavailable || problems.Status(slug) != 503 {
		t.Errorf("provider down: %s", slug)
	}
	if problems.Status("no-such-slug") != 500 {
		t.Error("unknown slug is not 500")
	}
	for _, s := range problems.Slugs() {
		if problems.Status(s) < 400 {
			t.Errorf("%s has status %d", s, problems.Status(s))
		}
	}
}
