package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestRead(t *testing.T) {
	build := func(version string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/cardexhq/cardex", Version: version}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	cases := []struct {
		name     string
		read     func() (*debug.BuildInfo, bool)
		override string
		want     Info
		line     string
	}{
		{"work tree", build("(devel)", "vcs.revision", "7ef600e1", "vcs.modified", "false"), "",
			Info{"dev", "7ef600e1", "go1.26.8"}, "cardex dev (commit 7ef600e1, go1.26.8)"},
		{"modified work tree", build("(devel)", "vcs.revision", "7ef600e1", "vcs.modified", "true"), "",
			Info{"dev", "7ef600e1-modified", "go1.26.8"}, "cardex dev (commit 7ef600e1-modified, go1.26.8)"},
		{"module install", build("v0.4.1"), "",
			Info{"v0.4.1", "", "go1.26.8"}, "cardex v0.4.1 (go1.26.8)"},
		{"link-time override", build("(devel)", "vcs.revision", "abc"), "v9.9.9",
			Info{"v9.9.9", "abc", "go1.26.8"}, "cardex v9.9.9 (commit abc, go1.26.8)"},
		{"no build information", func() (*debug.BuildInfo, bool) { return nil, false }, "",
			Info{Version: "dev"}, "cardex dev"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := Override
			Override = c.override
			defer func() { Override = old }()
			got := read(c.read)
			if got != c.want {
				t.Fatalf("read = %+v, want %+v", got, c.want)
			}
			if s := got.String(); s != c.line {
				t.Fatalf("String = %q, want %q", s, c.line)
			}
		})
	}
}

// The test binary itself carries build information: Get must not fall
// back to an empty toolchain.
func TestGetOfThisBinary(t *testing.T) {
	if g := Get(); g.GoVersion == "" || g.Version == "" {
		t.Fatalf("Get() = %+v", g)
	}
}
