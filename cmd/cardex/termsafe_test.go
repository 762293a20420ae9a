package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// hostileServer answers every request on loopback with a status line whose
// reason phrase would clear the screen, retitle the window and hide text,
// and a card name carrying a C1 CSI.
func hostileServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 418 \x1b[2J\x1b]0;pwned\x07\x1b[8mhidden\u009b31m\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/card.json"
}

// Nothing a server sends reaches the terminal as a control sequence: the
// crawl, lint and verify output shows the escapes as text, and --json
// still decodes to exactly what the server sent.
func TestNetworkTextCannotDriveTheTerminal(t *testing.T) {
	url := hostileServer(t)
	for _, args := range [][]string{
		{"crawl", "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", url},
		{"lint", "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", url},
		{"verify", "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", url},
	} {
		_, out, errs := runCLI(t, "", args...)
		all := out + errs
		if strings.ContainsAny(all, "\x1b\x07\u009b") {
			t.Errorf("%s printed a control character: %q", args[0], all)
		}
		if !strings.Contains(all, `\u001b[2J`) || !strings.Contains(all, `\u009b31m`) {
			t.Errorf("%s does not show the escapes as text: %q", args[0], all)
		}
	}
	code, out, _ := runCLI(t, "", "crawl", "--json", "--allow-networks", "127.0.0.0/8", "--allow-insecure-http", url)
	var rep crawlReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitFail || rep.Error == nil {
		t.Fatalf("--json: exit %d %v\n%s", code, err, out)
	}
	if !strings.Contains(rep.Error.Message, "\x1b[2J\x1b]0;pwned\x07\x1b[8mhidden\u009b31m") {
		t.Errorf("--json lost what the server sent: %q", rep.Error.Message)
	}
}

func TestTermSafe(t *testing.T) {
	var b bytes.Buffer
	in := "ok\tline\nbell\a esc\x1b del\x7f csi\u009b bad\xff é"
	if _, err := (termSafe{&b}).Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "ok\tline\nbell\\u0007 esc\\u001b del\\u007f csi\\u009b bad\\xff é"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
