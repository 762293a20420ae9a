package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/cardexhq/cardex/search/zapread"
)

// bleveConfig is the runtime configuration of every generation.
// bolt_timeout makes a second opener fail instead of hanging (G.70).
func bleveConfig(lockTimeout time.Duration) map[string]any {
	return map[string]any{"bolt_timeout": lockTimeout.String()}
}

func openBleve(path string, lockTimeout time.Duration, noMerges bool) (idx bleve.Index, err error) {
	// A damaged segment can make Bleve panic while loading a snapshot
	// instead of returning an error; either way the generation is corrupt.
	defer func() {
		if r := recover(); r != nil {
			idx, err = nil, fmt.Errorf("%w: open panicked: %v", ErrCorrupt, r)
		}
	}()
	cfg := bleveConfig(lockTimeout)
	if noMerges {
		cfg["scorchMergePlanOptions"] = zapread.BuildMergePlan()
	}
	idx, err = bleve.OpenUsing(path, cfg)
	if err != nil && boltHeld(path) {
		// Bleve gave up waiting for its root file's lock (bolt_timeout):
		// someone else has this generation open. Asked of the file's lock
		// itself rather than of Bolt's error value, so search needs no
		// import of Bolt.
		return nil, fmt.Errorf("%w: %s (index lock not acquired within %s)", ErrLocked, path, lockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return idx, nil
}

func readCurrent(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, currentFile))
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b))
	if _, ok := genNumber(name); !ok {
		return "", fmt.Errorf("CURRENT names %q, not a generation", name)
	}
	return name, nil
}

// writeCurrent replaces CURRENT atomically (write, fsync, rename, fsync the
// directory): after a crash it names either the old or the new generation,
// both complete.
func writeCurrent(dir, name string) error {
	tmp := filepath.Join(dir, currentFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(name + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, currentFile)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

func genName(n int64) string { return fmt.Sprintf("%s%010d", genPrefix, n) }

func genNumber(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, genPrefix)
	if !ok || len(rest) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil && n >= 0
}

// nextGeneration is one more than any generation in dir, live, stale or
// half-built, so a new build never reuses a name.
func (x *Index) nextGeneration() (string, error) {
	entries, err := os.ReadDir(x.dir)
	if err != nil {
		return "", err
	}
	var max int64
	if cur, err := readCurrent(x.dir); err == nil {
		max, _ = genNumber(cur)
	}
	for _, e := range entries {
		if n, ok := genNumber(strings.TrimSuffix(e.Name(), buildingSufx)); ok && n > max {
			max = n
		}
	}
	return genName(max + 1), nil
}

// removeStale deletes every generation directory that CURRENT does not
// name: leftovers of a crashed rebuild or of a swap whose delete was cut off.
func (x *Index) removeStale() {
	live := ""
	if x.cur != nil {
		live = x.cur.name
	}
	entries, err := os.ReadDir(x.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if _, ok := genNumber(strings.TrimSuffix(name, buildingSufx)); !ok || name == live {
			continue
		}
		if cur, err := readCurrent(x.dir); err == nil && cur == name && x.cur == nil {
			// Keep an unreadable live generation for inspection until a
			// rebuild replaces it.
			continue
		}
		if err := os.RemoveAll(filepath.Join(x.dir, name)); err != nil {
			x.opts.Logger.Warn("search: remove stale generation", "dir", name, "err", err.Error())
		}
	}
}
