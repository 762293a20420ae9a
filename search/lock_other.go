//go:build !unix

package search

import "os"

// lockDir only opens the lock file where flock is unavailable; Bolt's own
// lock with bolt_timeout still makes a second opener fail (G.70).
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func unlockDir(f *os.File) error {
	if f == nil {
		return nil
	}
	return f.Close()
}

// boltHeld cannot ask the lock where flock is unavailable: a generation
// Bleve cannot open is reported as damaged (ErrCorrupt).
func boltHeld(string) bool { return false }
