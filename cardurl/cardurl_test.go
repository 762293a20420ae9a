package cardurl_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/cardurl"
)

const wk = "/.well-known/agent-card.json"

// TestNormalizeCardURL covers docs/api.md "Agent identity" and docs/threats.md A.1–A.5 as
// they apply to submitted card URLs.
func TestNormalizeCardURL(t *testing.T) {
	loop := cardurl.Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	insecureLoop := loop
	insecureLoop.AllowInsecureHTTP = true
	tests := []struct {
		name, in string
		pol      cardurl.Policy
		want     string // normalized URL, or "" when an error is expected
		host     string
		bare     bool
		code     string // URL error code when want is ""
	}{
		// Identity normalization (docs/api.md "Agent identity").
		{name: "bare host without scheme", in: "a.com", want: "https://a.com" + wk, host: "a.com", bare: true},
		{name: "bare host", in: "https://a.com", want: "https://a.com" + wk, host: "a.com", bare: true},
		{name: "bare host slash", in: "https://a.com/", want: "https://a.com" + wk, host: "a.com", bare: true},
		{name: "uppercase scheme and host", in: "HTTPS://A.COM/Agent.json", want: "https://a.com/Agent.json", host: "a.com"},
		{name: "trailing dot", in: "https://a.com./card.json", want: "https://a.com/card.json", host: "a.com"},
		{name: "default port", in: "https://a.com:443/card.json", want: "https://a.com/card.json", host: "a.com"},
		{name: "unreserved escapes decoded", in: "https://a.com/%7Eteam/%61gent.json", want: "https://a.com/~team/agent.json", host: "a.com"},
		{name: "reserved escapes upper-cased", in: "https://a.com/a%2fb%3a.json?q=%3d", want: "https://a.com/a%2Fb%3A.json?q=%3D", host: "a.com"},
		{name: "query kept", in: "https://a.com/?tenant=x", want: "https://a.com" + wk + "?tenant=x", host: "a.com", bare: true},
		{name: "IDN to A-label (A.5)", in: "https://Bücher.de/", want: "https://xn--bcher-kva.de" + wk, host: "xn--bcher-kva.de", bare: true},
		{name: "valid A-label", in: "https://xn--bcher-kva.de/c.json", want: "https://xn--bcher-kva.de/c.json", host: "xn--bcher-kva.de"},
		{name: "private suffix name", in: "https://team.github.io/card.json", want: "https://team.github.io/card.json", host: "team.github.io"},
		{name: "surrounding spaces trimmed", in: "  https://a.com/  ", want: "https://a.com" + wk, host: "a.com", bare: true},

		// A.1: scheme, userinfo, fragment, port, path.
		{name: "http refused", in: "http://a.com/", code: cardurl.CodeInvalid},
		{name: "ftp", in: "ftp://a.com/", code: cardurl.CodeInvalid},
		{name: "userinfo", in: "https://user:pass@a.com/", code: cardurl.CodeInvalid},
		{name: "userinfo without scheme", in: "user@a.com", code: cardurl.CodeInvalid},
		{name: "fragment", in: "https://a.com/card.json#x", code: cardurl.CodeInvalid},
		{name: "empty fragment", in: "https://a.com/card.json#", code: cardurl.CodeInvalid},
		{name: "other port", in: "https://a.com:8443/", code: cardurl.CodeInvalid},
		{name: "port without scheme", in: "a.com:8443", code: cardurl.CodeInvalid},
		{name: "port out of range", in: "https://a.com:70000/", code: cardurl.CodeInvalid},
		{name: "dot segments", in: "https://a.com/x/../b", code: cardurl.CodeInvalid},
		{name: "encoded dot segments", in: "https://a.com/x/%2e%2e/b", code: cardurl.CodeInvalid},
		{name: "path without scheme", in: "a.com/x", code: cardurl.CodeInvalid},
		{name: "bad escape", in: "https://a.com/%zz", code: cardurl.CodeInvalid},
		{name: "empty", in: "", code: cardurl.CodeInvalid},

		// A.2: IP literals in any spelling.
		{name: "loopback v4", in: "https://127.0.0.1/", code: cardurl.CodeReserved},
		{name: "loopback v6", in: "https://[::1]/", code: cardurl.CodeReserved},
		{name: "decimal", in: "https://2130706433/", code: cardurl.CodeReserved},
		{name: "hex", in: "https://0x7f.1/", code: cardurl.CodeReserved},
		{name: "octal", in: "https://0177.0.0.1/", code: cardurl.CodeReserved},
		{name: "short", in: "https://127.1/", code: cardurl.CodeReserved},
		{name: "mapped v6", in: "https://[::ffff:10.0.0.1]/", code: cardurl.CodeReserved},
		{name: "metadata", in: "https://169.254.169.254/", code: cardurl.CodeReserved},
		{name: "public IP literal", in: "https://8.8.8.8/", code: cardurl.CodeInvalid},
		{name: "public decimal spelling", in: "https://134744072/", code: cardurl.CodeInvalid},
		{name: "v6 zone", in: "https://[fe80::1%25eth0]/", code: cardurl.CodeInvalid},
		{name: "allowed loopback", in: "https://127.0.0.1:8443/card.json", pol: loop, want: "https://127.0.0.1:8443/card.json", host: "127.0.0.1"},
		{name: "allowed loopback v6", in: "https://[::1]:9000/", pol: loop, want: "https://[::1]:9000" + wk, host: "::1", bare: true},
		{name: "allowed mapped v6 unmapped", in: "https://[::ffff:127.0.0.1]/c", pol: loop, want: "https://127.0.0.1/c", host: "127.0.0.1"},
		{name: "allowed network, odd spelling still refused", in: "https://127.1/", pol: loop, code: cardurl.CodeReserved},
		{name: "allowed network, other reserved address", in: "https://10.0.0.1/", pol: loop, code: cardurl.CodeReserved},
		{name: "insecure http allowed", in: "http://127.0.0.1:8080/", pol: insecureLoop, want: "http://127.0.0.1:8080" + wk, host: "127.0.0.1", bare: true},
		{name: "insecure http default port", in: "http://a.com:80/c", pol: insecureLoop, want: "http://a.com/c", host: "a.com"},
		{name: "name with port under allowed networks", in: "https://a.com:8443/c", pol: loop, want: "https://a.com:8443/c", host: "a.com"},

		// A.3: non-public names.
		{name: "localhost", in: "https://localhost/", code: cardurl.CodeReserved},
		{name: "sub.localhost", in: "https://x.localhost/", code: cardurl.CodeReserved},
		{name: "single label", in: "https://intranet/", code: cardurl.CodeInvalid},
		{name: ".local", in: "https://printer.local/", code: cardurl.CodeInvalid},
		{name: ".internal", in: "https://x.internal/", code: cardurl.CodeInvalid},
		{name: ".home.arpa", in: "https://x.home.arpa/", code: cardurl.CodeInvalid},
		{name: ".onion", in: "https://abc.onion/", code: cardurl.CodeInvalid},
		{name: "unknown TLD", in: "https://x.corp/", code: cardurl.CodeInvalid},
		{name: "numeric TLD", in: "https://a.b.123/", code: cardurl.CodeInvalid},
		{name: "public suffix", in: "https://co.uk/", code: cardurl.CodeInvalid},
		{name: "private public suffix", in: "https://github.io/", code: cardurl.CodeInvalid},

		// A.4: lengths and labels.
		{name: "two trailing dots", in: "https://a.com../", code: cardurl.CodeInvalid},
		{name: "empty label", in: "https://a..com/", code: cardurl.CodeInvalid},
		{name: "long label", in: "https://" + strings.Repeat("a", 64) + ".com/", code: cardurl.CodeInvalid},
		{name: "long name", in: "https://" + strings.Repeat("abcdefghi.", 26) + "com/", code: cardurl.CodeInvalid},
		{name: "too many labels", in: "https://a.b.c.d.e.f.g.h.i.j.com/", code: cardurl.CodeInvalid},
		{name: "leading hyphen", in: "https://-a.com/", code: cardurl.CodeInvalid},
		{name: "trailing hyphen", in: "https://a-.com/", code: cardurl.CodeInvalid},
		{name: "underscore", in: "https://a_b.com/", code: cardurl.CodeInvalid},

		// A.5: Unicode.
		{name: "R-LDH", in: "https://ab--x.com/", code: cardurl.CodeInvalid},
		{name: "malformed A-label", in: "https://xn--zz-.com/", code: cardurl.CodeInvalid},
		{name: "bad punycode", in: "https://xn--a.com/", code: cardurl.CodeInvalid},
		{name: "BOM", in: "\ufeffhttps://a.com/", code: cardurl.CodeInvalid},
		{name: "RLO", in: "https://a\u202e.com/", code: cardurl.CodeInvalid},
		{name: "zero-width space", in: "https://a\u200bb.com/", code: cardurl.CodeInvalid},
		{name: "zero-width joiner", in: "https://ab\u200d.com/", code: cardurl.CodeInvalid},
		{name: "soft hyphen", in: "https://a\u00adb.com/", code: cardurl.CodeInvalid},
		{name: "inner space", in: "https://a.com/a b", code: cardurl.CodeInvalid},
		{name: "CRLF", in: "https://a.com/\r\nx", code: cardurl.CodeInvalid},
		{name: "invalid UTF-8", in: "https://a.com/\xff", code: cardurl.CodeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := cardurl.Normalize(tc.in, tc.pol)
			got, host, bare := u.URL, u.Host, u.BareHost
			if tc.want != "" {
				if err != nil || got != tc.want || host != tc.host || bare != tc.bare {
					t.Fatalf("got (%q, %q, %v, %v); want (%q, %q, %v)", got, host, bare, err, tc.want, tc.host, tc.bare)
				}
				return
			}
			var ue *cardurl.Error
			if !errors.As(err, &ue) || !errors.Is(err, cardurl.ErrInvalid) || ue.Code != tc.code {
				t.Fatalf("got (%q, %v); want URL error %s", got, err, tc.code)
			}
		})
	}
}

// TestEquivalentSpellingsAreOneIdentity (docs/threats.md A.6, docs/api.md "Agent identity").
func TestEquivalentSpellingsAreOneIdentity(t *testing.T) {
	spellings := []string{"bücher.de", "https://BÜCHER.de", "https://xn--bcher-kva.de/", "https://xn--bcher-kva.de.:443",
		"HTTPS://XN--BCHER-KVA.DE/.well-known/agent-card.json", "https://xn--bcher-kva.de/%2Ewell-known/agent-card%2Ejson"}
	for _, s := range spellings {
		got, err := cardurl.Normalize(s, cardurl.Policy{})
		if err != nil || got.URL != "https://xn--bcher-kva.de"+wk {
			t.Errorf("%q → %q, %v", s, got.URL, err)
		}
	}
}

// Origin is what a claim's token is scoped to (docs/claims.md): the scheme
// and authority of a normalized URL, the default port already left out.
func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example.com/.well-known/agent-card.json": "https://a.example.com",
		"http://127.0.0.2:9000/agents/1":                    "http://127.0.0.2:9000",
		"https://[2001:db8::1]:8443/x?y=1":                  "https://[2001:db8::1]:8443",
		"https://a.example.com?q":                           "https://a.example.com",
		"a.example.com/x":                                   "",
		"https:///x":                                        "",
	} {
		if got := cardurl.Origin(in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
	u, err := cardurl.Normalize("https://A.Example.COM:443/x", cardurl.Policy{})
	if err != nil || cardurl.Origin(u.URL) != "https://a.example.com" {
		t.Fatalf("Normalize then Origin: %q %v", cardurl.Origin(u.URL), err)
	}
}
