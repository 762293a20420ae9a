package cardurl_test

import (
	"testing"

	"github.com/cardexhq/cardex/cardurl"
)

// docs/threats.md K.100: every spelling of one host keys one per-host
// budget.
func TestHostKeySpellings(t *testing.T) {
	groups := map[string][]string{
		"127.0.0.4": {"127.0.0.4", "[::ffff:127.0.0.4]", "::ffff:127.0.0.4", "[::ffff:7f00:4]", "127.0.0.4.",
			"127.0.0.4:8080", "[::ffff:127.0.0.4]:443", "http://127.0.0.4:9000/a2a", "https://[::ffff:7f00:4]/x?y=1",
			"2130706436", "0x7f.0.0.4", "0177.0.0.4", "127.4", "grpcs://user@127.0.0.4:50051"},
		"::1":                   {"::1", "[::1]", "[::1]:8443", "[0:0:0:0:0:0:0:1]", "http://[::1]:80/"},
		"agent.example.com":     {"agent.example.com", "AGENT.Example.COM", "agent.example.com.", "https://Agent.Example.com./card", "agent.example.com:443"},
		"xn--bcher-kva.example": {"bücher.example", "BÜCHER.example.", "xn--bcher-kva.example", "https://Bücher.example:8443/a"},
	}
	for want, spellings := range groups {
		for _, s := range spellings {
			if got := cardurl.HostKey(s); got != want {
				t.Errorf("HostKey(%q) = %q, want %q", s, got, want)
			}
		}
	}
	if a, b := cardurl.HostKey("a.example.com"), cardurl.HostKey("b.example.com"); a == b {
		t.Errorf("two hosts share the key %q", a)
	}
}
