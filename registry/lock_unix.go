//go:build unix

package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive, non-blocking flock on {dir}/cardex.lock
// (docs/threats.md F.67): a second server on the same data directory fails
// at once with a clear error instead of becoming a silent second writer. The
// kernel drops the lock when the process dies, so a kill -9 never leaves a
// stale lock behind.
func lockDataDir(dir string) (func() error, error) {
	path := filepath.Join(dir, "cardex.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held (stop the other server first)", ErrDataDirLocked, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() error {
		// Closing the descriptor releases the flock.
		return f.Close()
	}, nil
}
