package main

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// termSafe writes text that came from the network (a server's reason
// phrase, a card's name, a key set's error) to an operator's terminal
// without letting it act on the terminal: every C0 control but newline
// and tab, DEL and every C1 control (which some terminals read as CSI) is
// written as a visible \uXXXX escape, and a byte that is not UTF-8 as \xNN
// (docs/security.md "Output of the command line"). In JSON output the
// encoder has escaped C0 controls already; a C1 control written as \uXXXX
// is the same JSON string, so --json stays valid and means the same.
type termSafe struct{ w io.Writer }

func (t termSafe) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = fmt.Appendf(out, `\x%02x`, p[i])
		case r == '\n' || r == '\t':
			out = append(out, byte(r))
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// networkOutput is e with its output made terminal-safe, for the commands
// that print what a server sent.
func networkOutput(e *env) *env {
	c := *e
	c.stdout, c.stderr = termSafe{e.stdout}, termSafe{e.stderr}
	return &c
}
