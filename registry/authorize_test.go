package registry_test

import (
	"errors"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

func TestAuthorize(t *testing.T) {
	pub := publisher("a.example.com")
	want := map[registry.Need][4]error{ // anonymous, reader, publisher, admin
		registry.NeedAnyone:    {nil, nil, nil, nil},
		registry.NeedToken:     {registry.ErrUnauthorized, nil, nil, nil},
		registry.NeedPublisher: {registry.ErrUnauthorized, registry.ErrForbidden, nil, nil},
		registry.NeedAdmin:     {registry.ErrUnauthorized, registry.ErrForbidden, registry.ErrForbidden, nil},
	}
	for n, errs := range want {
		for i, p := range []registry.Principal{anonymous, reader, pub, admin} {
			if got := registry.Authorize(p, n); !errors.Is(got, errs[i]) || (errs[i] == nil) != (got == nil) {
				t.Errorf("need %d, %q: %v, want %v", n, p.Role, got, errs[i])
			}
		}
	}
	if registry.ActionNeed(registry.ActionRemove) != registry.NeedPublisher || registry.ActionNeed(registry.ActionApprove) != registry.NeedAdmin {
		t.Error("ActionNeed")
	}
}
