package main

import (
	"errors"
	"flag"
	"fmt"
)

func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parseFlagsAndArgs parses flags that may come before or after positional
// arguments, as people type them (`cardex verify card.json --json`). It
// returns the positional arguments in order, and an exit code ≥ 0 when
// parsing ended the command (help: 0, a bad flag: 2).
func parseFlagsAndArgs(fs *flag.FlagSet, args []string) ([]string, int) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK
			}
			return nil, exitUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, -1
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// oneArgument checks that exactly one positional argument was given; if
// not it says why on the flag set's output, prints the usage and returns
// the usage exit code.
func oneArgument(fs *flag.FlagSet, cmd, missing string, pos []string) (int, bool) {
	switch {
	case len(pos) == 0:
		fmt.Fprintf(fs.Output(), "%s: %s\n", cmd, missing)
	case len(pos) > 1:
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", cmd, pos[1])
	default:
		return 0, true
	}
	fs.Usage()
	return exitUsage, false
}
