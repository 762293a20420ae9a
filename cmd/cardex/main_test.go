package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/buildinfo"
)

// runCLI runs the CLI in-process and returns its exit code and streams.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = run(t.Context(), e, args)
	return code, out.String(), errb.String()
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	code, out, errs := runCLI(t, "", "frobnicate")
	if code != exitUsage || out != "" || !strings.Contains(errs, `unknown command "frobnicate"`) || !strings.Contains(errs, "Usage: cardex") {
		t.Fatalf("code=%d stdout=%q stderr=%q", code, out, errs)
	}
}

func TestNoArgumentsIsUsageError(t *testing.T) {
	code, _, errs := runCLI(t, "")
	if code != exitUsage || !strings.Contains(errs, "Commands:") {
		t.Fatalf("code=%d stderr=%q", code, errs)
	}
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runCLI(t, "", "--help")
	if code != exitOK {
		t.Fatalf("code=%d", code)
	}
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name) {
			t.Errorf("help does not list %q:\n%s", c.name, out)
		}
	}
}

func TestVersion(t *testing.T) {
	want := buildinfo.Get().String() + "\n"
	if !strings.HasPrefix(want, "cardex ") || !strings.Contains(want, "go1.") {
		t.Fatalf("build line %q", want)
	}
	for _, spelling := range []string{"version", "--version", "-version"} {
		code, out, _ := runCLI(t, "", spelling)
		if code != exitOK || out != want {
			t.Fatalf("%s: code=%d out=%q, want %q", spelling, code, out, want)
		}
	}
	if code, _, _ := runCLI(t, "", "version", "extra"); code != exitUsage {
		t.Fatalf("extra argument: code=%d", code)
	}
}
