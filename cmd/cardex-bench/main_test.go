package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/bench"
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/load"
	"github.com/cardexhq/cardex/cmd/cardex-bench/internal/searchload"
)

// Each subcommand is reached by its name and parses its own flags; no
// subcommand or an unknown one is a usage error that lists them.
func TestSubcommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout or stderr
	}{
		{nil, bench.ExitUsage, "load "},
		{[]string{"nope"}, bench.ExitUsage, `unknown subcommand "nope"`},
		{[]string{"-h"}, bench.ExitOK, "search "},
		{[]string{"load", "-clients", "0"}, bench.ExitUsage, "cardex-bench load: -clients 0"},
		{[]string{"load", "-h"}, bench.ExitOK, "-goroutine-slack"},
		{[]string{"search", "-agents", "0"}, bench.ExitUsage, "cardex-bench search: -agents must be at least 1"},
		{[]string{"search", "-h"}, bench.ExitOK, "-cost"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
			t.Errorf("%q: exit %d, want %d with %q\nstdout %q\nstderr %q", tc.args, code, tc.code, tc.out, stdout.String(), stderr.String())
		}
	}
}

// checkArgs reports whether args name a subcommand and flags it accepts,
// without running it.
func checkArgs(args []string) error {
	parse := map[string]func([]string) error{
		"load":   func(a []string) error { _, err := load.Parse(a, io.Discard); return err },
		"search": func(a []string) error { _, err := searchload.Parse(a, io.Discard); return err },
	}
	if len(args) == 0 || parse[args[0]] == nil {
		return fmt.Errorf("no subcommand in %q", args)
	}
	return parse[args[0]](args[1:])
}

// Every cardex-bench command written in the README and docs/ names a
// subcommand and flags it accepts, as written: placeholders (…, $TOKEN,
// an optional [-flag VALUE]) stand for values of the flag before them.
func TestDocumentedCommands(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	// Inline code, which may wrap onto the next line, and lines of code
	// blocks.
	cmd := regexp.MustCompile("`go run \\./cmd/cardex-bench ([^`]+)`|(?m)^go run \\./cmd/cardex-bench (.+)$")
	placeholder := map[string]string{"-url": "http://127.0.0.1:8080", "-cardex": "/bin/cardex", "-database-url": "postgres://127.0.0.1/postgres"}
	n := 0
	for _, f := range append(files, "../../README.md", "../../search/README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cmd.FindAllStringSubmatch(string(b), -1) {
			line := strings.NewReplacer("[", "", "]", "").Replace(m[1] + m[2])
			args := strings.Fields(line)
			for i, a := range args {
				if a == "…" || strings.HasPrefix(strings.Trim(a, `"`), "$") || a == "BINARY" {
					args[i] = "x"
					if v, ok := placeholder[args[i-1]]; ok {
						args[i] = v
					}
				}
			}
			n++
			if err := checkArgs(args); err != nil {
				t.Errorf("%s: %q: %v", f, line, err)
			}
		}
	}
	if n < 6 {
		t.Errorf("%d documented cardex-bench commands, want the load, search, -cost and -defaults ones", n)
	}
}
