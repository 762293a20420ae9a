package cardurl_test

import (
	"testing"

	"github.com/cardexhq/cardex/cardurl"
)

// docs/threats.md A.8: submissions are also counted per registrable domain.
func TestDomainKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://agent-1.example.com/":                        "example.com",
		"https://A.B.Example.COM/.well-known/agent-card.json": "example.com",
		"victim.co.uk":                 "victim.co.uk",
		"https://x.y.victim.co.uk:443": "victim.co.uk",
		"https://bücher.de/":           "xn--bcher-kva.de",
		"https://127.0.0.1/":           "127.0.0.1",
		"https://[::1]:8443/":          "::1",
		"https://co.uk/":               "co.uk",
		// A bare host and its https:// URL share one key (the web form
		// once skipped the limit for the former).
		"a.victim.example":   "victim.example",
		" b.victim.example ": "victim.example",
		"C.Victim.Example.":  "victim.example",
	} {
		if got := cardurl.DomainKey(in); got != want {
			t.Errorf("DomainKey(%q) = %q, want %q", in, got, want)
		}
	}
}
