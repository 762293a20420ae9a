package registry_test

import (
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

func TestOpenMigratesAndIsCurrent(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, s *registry.Store) {
		ok, err := s.MigrationsCurrent(t.Context())
		if err != nil || !ok {
			t.Fatalf("MigrationsCurrent = %v, %v; want true", ok, err)
		}
		v, err := s.SchemaVersion(t.Context())
		if err != nil || v != 1 {
			t.Fatalf("SchemaVersion = %d, %v; want 1", v, err)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(t.Name(), s.Dialect()) {
			t.Fatalf("dialect %q in test %q", s.Dialect(), t.Name())
		}
		// Migrating again is a no-op.
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
