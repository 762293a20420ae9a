package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/registry"
)

// demoCards are the published cards of /work/shared/testdata/cards that
// parse as listable agents (names kept: they say where each card comes
// from; the Raydium sample's empty url is filled in, as it must be for an
// agent card, docs/lint.md), served by the demo fleet beside generated ones.
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
	// Ports are the loopback ports this demo's agents listen on. They are
	// kept so a restart serves the same card URLs (the agents' identities),
	// and each demo directory has its own, so a second demo on the same
	// machine never takes over the first one's agents.
	Ports demoPorts `json:"ports"`
}

// demoPorts are a demo's agent ports; 0 means not chosen yet.
type demoPorts struct {
	Fleet int `json:"fleet"`
	Flaky int `json:"flaky"`
	Live  int `json:"live"`
	// Catalog is the multi-agent host's port (demo_catalog.go).
	Catalog int `json:"catalog,omitempty"`
	// A2A and GRPC are the ports of the A2A endpoints the agents'
	// interfaces point at (demo_a2a.go).
	A2A  int `json:"a2a,omitempty"`
	GRPC int `json:"grpc,omitempty"`
}

func readDemoMarker(dir string) (demoMarkerFile, error) {
	var m demoMarkerFile
	b, err := os.ReadFile(filepath.Join(dir, demoMarker))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("demo marker %s: %w", filepath.Join(dir, demoMarker), err)
	}
	return m, nil
}

// writeDemoPorts records the ports the demo's agents got.
func writeDemoPorts(dir string, p demoPorts) error {
	m, err := readDemoMarker(dir)
	if err != nil {
		return err
	}
	m.Ports = p
	return writeDemoMarker(dir, m)
}

func writeDemoMarker(dir string, m demoMarkerFile) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, demoMarker), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("demo marker: %w", err)
	}
	return nil
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
// refuses a directory holding Cardex data without the marker (docs/api.md
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
	if err := writeDemoMarker(dir, demoMarkerFile{Cardex: "demo", CreatedAt: now.UTC(), Version: buildinfo.Get().Version}); err != nil {
		return false, err
	}
	return true, nil
}

// maxDemoDirs bounds how many demos started without --data may run side
// by side: ./cardex-demo, then ./cardex-demo-2 … ./cardex-demo-9.
const maxDemoDirs = 9

// openDemoStore prepares and opens the demo's data directory. Without
// --data, a directory another running demo holds is passed over for the
// next one (./cardex-demo-2, …), so a second demo on the same machine gets
// its own data instead of failing on the first one's lock.
func openDemoStore(ctx context.Context, cfg *serveConfig, log *slog.Logger) (dir string, first bool, store *registry.Store, err error) {
	dirs := []string{cfg.Store.data}
	if !cfg.dataSet {
		for i := 2; i <= maxDemoDirs; i++ {
			dirs = append(dirs, fmt.Sprintf("%s-%d", cfg.Store.data, i))
		}
	}
	for i, dir := range dirs {
		last := i == len(dirs)-1
		first, err := prepareDemoDir(dir, time.Now())
		if errors.Is(err, errNotDemoDir) && !last {
			log.Info("demo: passing over a directory with other Cardex data", "dir", dir)
			continue
		}
		if err != nil {
			return "", false, nil, err
		}
		store, err := registry.Open(ctx, registry.OpenOptions{DataDir: dir, Logger: log, ServerLock: true})
		if errors.Is(err, registry.ErrDataDirLocked) && !last {
			log.Info("demo: directory in use by another running demo, using the next one", "dir", dir)
			continue
		}
		if err != nil {
			return "", false, nil, fmt.Errorf("open store: %w", err)
		}
		return dir, first, store, nil
	}
	return "", false, nil, errors.New("demo: no data directory") // unreachable: the last one returns
}
