// Package buildinfo says which Cardex this binary is: the module version
// and the source commit it was built from. `cardex --version`, the
// crawler's User-Agent, /healthz and the cardex_build_info metric all read
// it here (docs/operator-guide.md "Install" and "Monitoring").
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Override, when set at link time with
// -ldflags "-X github.com/cardexhq/cardex/buildinfo.Override=v1.2.3",
// replaces the module version (release builds made outside the module
// system, such as the Docker image).
var Override string

// Info is what one binary knows of its own build.
type Info struct {
	// Version is the module version ("v0.4.1", a pseudo-version for
	// `go install module@commit`), Override when set, or "dev" for a
	// build from a work tree.
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, with
	// "-modified" when the work tree had uncommitted changes; empty when
	// the toolchain recorded none (a build from a module download or with
	// -buildvcs=false).
	Commit string `json:"commit,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"goVersion"`
}

var (
	once sync.Once
	info Info
)

// Get is this binary's Info, read once from the build information the Go
// toolchain embeds.
func Get() Info {
	once.Do(func() { info = read(debug.ReadBuildInfo) })
	return info
}

func read(readBuild func() (*debug.BuildInfo, bool)) Info {
	out := Info{Version: "dev"}
	bi, ok := readBuild()
	if ok {
		out.GoVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			out.Version = v
		}
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" && modified {
			rev += "-modified"
		}
		out.Commit = rev
	}
	if Override != "" {
		out.Version = Override
	}
	return out
}

// String is the one-line form `cardex --version` prints:
// "cardex v0.4.1 (commit 1a2b3c4d…, go1.26.8)".
func (i Info) String() string {
	s := "cardex " + i.Version
	switch {
	case i.Commit != "" && i.GoVersion != "":
		s += " (commit " + i.Commit + ", " + i.GoVersion + ")"
	case i.Commit != "":
		s += " (commit " + i.Commit + ")"
	case i.GoVersion != "":
		s += " (" + i.GoVersion + ")"
	}
	return s
}
