//go:build unix

package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on dir/LOCK for the life of
// the Index. Bolt's own lock (with bolt_timeout) guards one generation; this
// one also guards the CURRENT pointer and rebuilds, so `cardex reindex`
// cannot swap a directory under a running server (G.70).
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, err
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	if f == nil {
		return nil
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return f.Close()
}

// boltRoot is where Bleve's scorch index keeps its root file, the one its
// Bolt store locks with flock while a process has the index open.
func boltRoot(gen string) string { return filepath.Join(gen, "store", "root.bolt") }

// boltHeld reports whether another open file holds the flock of gen's root
// file: asked after Bleve failed to open gen, it tells a generation another
// process has open (ErrLocked, G.70) from a damaged one. The probe takes
// the lock without waiting and gives it back at once.
func boltHeld(gen string) bool {
	f, err := os.Open(boltRoot(gen))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
