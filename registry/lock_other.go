//go:build !unix

package registry

import (
	"errors"
	"fmt"
)

// lockDataDir: flock is unix-only; on other systems a server lock cannot be
// taken safely, so asking for one is an error rather than a silent no-op.
func lockDataDir(dir string) (func() error, error) {
	return nil, fmt.Errorf("data directory lock for %s: %w", dir, errors.ErrUnsupported)
}
