package main

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// demoCards are the published cards of /work/shared/testdata/cards that
// parse (names kept: they say where each card comes from), served by the
// demo fleet beside generated ones.
//
//go:embed demodata/*.json
var demoCards embed.FS

// demoMarker is the file that makes a data directory a demo directory.
// It holds nothing secret: the demo admin token is printed once, never
// stored here.
const demoMarker = "demo.json"

// Sentinel errors of the data-directory checks.
var (
	// errNotDemoDir: --demo was pointed at a directory holding real data.
	errNotDemoDir = errors.New("the data directory holds Cardex data that is not a demo's")
	// errDemoDir: plain serve was pointed at a demo directory.
	errDemoDir = errors.New("the data directory holds the demo catalogue")
)

type demoMarkerFile struct {
	Cardex    string    `json:"cardex"` // always "demo"
	CreatedAt time.Time `json:"createdAt"`
	Version   string    `json:"version"` // the cardex version that created it
}

// hasCardexData reports whether dir holds a Cardex store or index.
func hasCardexData(dir string) (bool, error) {
	for _, name := range []string{"cardex.db", "index"} {
		_, err := os.Stat(filepath.Join(dir, name))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

func isDemoDir(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, demoMarker))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// checkNotDemoDir keeps plain serve off a demo directory, so demo agents
// and their approvals never mix into a real catalogue.
func checkNotDemoDir(dir string) error {
	demo, err := isDemoDir(dir)
	if err != nil {
		return err
	}
	if demo {
		return fmt.Errorf("%w (%s has %s): run it with --demo, or point --data at another directory", errDemoDir, dir, demoMarker)
	}
	return nil
}

// prepareDemoDir makes dir a demo directory, or checks that it is one. It
// refuses a directory holding Cardex data without the marker (CONTRACT.md
// §6). first is true when the marker was written now.
func prepareDemoDir(dir string, now time.Time) (first bool, err error) {
	demo, err := isDemoDir(dir)
	if err != nil || demo {
		return false, err
	}
	data, err := hasCardexData(dir)
	if err != nil {
		return false, err
	}
	if data {
		return false, fmt.Errorf("%w (%s has no %s): --demo never touches a real catalogue; give it an empty --data directory", errNotDemoDir, dir, demoMarker)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	b, err := json.MarshalIndent(demoMarkerFile{Cardex: "demo", CreatedAt: now.UTC(), Version: version}, "", "  ")
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(filepath.Join(dir, demoMarker), append(b, '\n'), 0o600); err != nil {
		return false, fmt.Errorf("demo marker: %w", err)
	}
	return true, nil
}
