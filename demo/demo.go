// Package demo is `cardex serve --demo` (docs/operator-guide.md "The demo"):
// a demo data directory, a loopback fleet of fake agents that shows every
// state a catalogue knows (signed, tampered, flaky, changing, claimed,
// listed in a catalog, answering A2A or not), and the seeding that submits
// and approves them through the registry's own use cases. cmd/cardex
// wires it into serve; nothing here is linked by a server without --demo
// beyond the data-directory check.
package demo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/cardexhq/cardex/buildinfo"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
)

// demoCards are the published cards of /work/shared/testdata/cards that
// parse as listable agents (names kept: they say where each card comes
// from; the Raydium sample's empty url is filled in, as it must be for an
// agent card, docs/lint.md), served by the demo fleet beside generated ones.
//
//go:embed demodata/*.json
var demoCards embed.FS

// MarkerFile is the file that makes a data directory a demo directory.
// It holds nothing secret: the demo admin token is printed once, never
// stored here.
const MarkerFile = "demo.json"

// Sentinel errors of the data-directory checks.
var (
	// ErrNotDemoDir: --demo was pointed at a directory holding real data.
	ErrNotDemoDir = errors.New("the data directory holds Cardex data that is not a demo's")
	// ErrDemoDir: plain serve was pointed at a demo directory.
	ErrDemoDir = errors.New("the data directory holds the demo catalogue")
)

// Marker is the content of a demo directory's MarkerFile.
type Marker struct {
	Cardex    string    `json:"cardex"` // always "demo"
	CreatedAt time.Time `json:"createdAt"`
	Version   string    `json:"version"` // the cardex version that created it
	// Ports are the loopback ports this demo's agents listen on. They are
	// kept so a restart serves the same card URLs (the agents' identities),
	// and each demo directory has its own, so a second demo on the same
	// machine never takes over the first one's agents.
	Ports Ports `json:"ports"`
}

// Ports are a demo's agent ports; 0 means not chosen yet.
type Ports struct {
	Fleet int `json:"fleet"`
	Flaky int `json:"flaky"`
	Live  int `json:"live"`
	// Catalog is the multi-agent host's port (catalog.go).
	Catalog int `json:"catalog,omitempty"`
	// A2A and GRPC are the ports of the A2A endpoints the agents'
	// interfaces point at (a2a.go).
	A2A  int `json:"a2a,omitempty"`
	GRPC int `json:"grpc,omitempty"`
}

// ReadMarker reads dir's demo marker.
func ReadMarker(dir string) (Marker, error) {
	var m Marker
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("demo marker %s: %w", filepath.Join(dir, MarkerFile), err)
	}
	return m, nil
}

// writeDemoPorts records the ports the demo's agents got.
func writeDemoPorts(dir string, p Ports) error {
	m, err := ReadMarker(dir)
	if err != nil {
		return err
	}
	m.Ports = p
	return writeDemoMarker(dir, m)
}

func writeDemoMarker(dir string, m Marker) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), append(b, '\n'), 0o600); err != nil {
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
	_, err := os.Stat(filepath.Join(dir, MarkerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// CheckNotDemoDir keeps plain serve off a demo directory, so demo agents
// and their approvals never mix into a real catalogue.
func CheckNotDemoDir(dir string) error {
	demo, err := isDemoDir(dir)
	if err != nil {
		return err
	}
	if demo {
		return fmt.Errorf("%w (%s has %s): run it with --demo, or point --data at another directory", ErrDemoDir, dir, MarkerFile)
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
		return false, fmt.Errorf("%w (%s has no %s): --demo never touches a real catalogue; give it an empty --data directory", ErrNotDemoDir, dir, MarkerFile)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	if err := writeDemoMarker(dir, Marker{Cardex: "demo", CreatedAt: now.UTC(), Version: buildinfo.Get().Version}); err != nil {
		return false, err
	}
	return true, nil
}

// maxDemoDirs bounds how many demos started without --data may run side
// by side: ./cardex-demo, then ./cardex-demo-2 … ./cardex-demo-9.
const maxDemoDirs = 9

// openDemoStore prepares and opens the demo's data directory. Without
// --data (fixed false), a directory another running demo holds is passed
// over for the next one (./cardex-demo-2, …), so a second demo on the same
// machine gets its own data instead of failing on the first one's lock.
func openDemoStore(ctx context.Context, data string, fixed bool, log *slog.Logger) (dir string, first bool, store *registry.Store, err error) {
	dirs := []string{data}
	if !fixed {
		for i := 2; i <= maxDemoDirs; i++ {
			dirs = append(dirs, fmt.Sprintf("%s-%d", data, i))
		}
	}
	for i, dir := range dirs {
		last := i == len(dirs)-1
		first, err := prepareDemoDir(dir, time.Now())
		if errors.Is(err, ErrNotDemoDir) && !last {
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

// Config is what the demo takes of serve's settings.
type Config struct {
	// DataDir is the demo's data directory (--data, ./cardex-demo by
	// default).
	DataDir string
	// DataDirSet says --data was given: only DataDir is tried. Without it
	// a directory another running demo holds is passed over for
	// DataDir-2 … DataDir-9.
	DataDirSet bool
	Logger     *slog.Logger
}

// Demo is a started demo: its data directory and the store opened in it,
// and its agents, serving on loopback.
type Demo struct {
	// Dir is the data directory in use: Config.DataDir or one of the
	// directories after it.
	Dir string
	// Store is the demo's SQLite store, opened with the server lock.
	Store *registry.Store
	first bool // the marker was written at this start
	fleet *demoFleet
}

// Start prepares (or checks) the demo's data directory, opens its store
// and starts its agents on the ports this directory's marker recorded,
// recording the ports they got. Close stops them and closes the store.
func Start(ctx context.Context, cfg Config) (*Demo, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, first, store, err := openDemoStore(ctx, cfg.DataDir, cfg.DataDirSet, log)
	if err != nil {
		return nil, err
	}
	marker, err := ReadMarker(dir)
	if err != nil {
		store.Close()
		return nil, err
	}
	fleet, err := startDemoFleet(log, marker.Ports)
	if err != nil {
		store.Close()
		return nil, err
	}
	if fleet.ports != marker.Ports {
		if err := writeDemoPorts(dir, fleet.ports); err != nil {
			fleet.Close()
			store.Close()
			return nil, err
		}
	}
	return &Demo{Dir: dir, Store: store, first: first, fleet: fleet}, nil
}

// Networks are the addresses of the demo's agents: the only ones a demo
// server's network policy allows, with plain HTTP.
func (d *Demo) Networks() []netip.Prefix { return d.fleet.nets }

// ProbeFetcher is the demo prober's client over the server's fetch policy
// pol: it trusts the demo's gRPC certificate, resolves no name and dials
// only the demo's own addresses. The caller closes it.
func (d *Demo) ProbeFetcher(pol fetch.Policy, log *slog.Logger) (*fetch.Fetcher, error) {
	return d.fleet.probeFetcher(pol, log)
}

// Welcome prints where to browse and, on the demo directory's first start,
// creates and prints the demo admin token.
func (d *Demo) Welcome(ctx context.Context, w io.Writer, svc *registry.Service, browse string) error {
	return demoWelcome(ctx, w, svc, d.first, browse, d.Dir)
}

// Seed registers, approves and then breaks the demo's agents through svc
// (seed.go). kick asks the crawler and the prober to look at once;
// crawlCatalogs crawls the catalogs due and returns the ids of the agents
// they registered.
func (d *Demo) Seed(ctx context.Context, svc *registry.Service, kick func(), crawlCatalogs func(context.Context) []string, log *slog.Logger) error {
	return d.fleet.seed(ctx, svc, kick, crawlCatalogs, log)
}

// Close stops the demo's agents, then closes its store.
func (d *Demo) Close() error {
	d.fleet.Close()
	return d.Store.Close()
}
