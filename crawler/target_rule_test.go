package crawler_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/fetch"
)

// `cardex crawl X` reads X by the card-URL rule a submission goes through:
// the same identity for every spelling, and a loopback name or reserved
// literal refused at once, before any name is resolved.
func TestTargetForFollowsTheCardURLRule(t *testing.T) {
	pol := fetch.DefaultPolicy()
	for _, in := range []string{"bücher.de", "https://BÜCHER.de", "https://xn--bcher-kva.de.:443",
		"HTTPS://XN--BCHER-KVA.DE/%2Ewell-known/agent-card%2Ejson", "https://a.example.com/%7Eteam/c.json?x=%3d"} {
		want, err := cardurl.Normalize(in, cardurl.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := crawler.TargetFor(in, pol)
		if err != nil || got.CardURL != want.URL || got.BareHost != want.BareHost {
			t.Errorf("%q: target %+v, %v; the rule says %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"https://localhost.:8443/", "https://api.localhost/", "https://127.0.0.1/", "https://[::ffff:10.20.30.40]/", "https://0x7f.1/"} {
		_, err := crawler.TargetFor(in, pol)
		var fe *fetch.FetchError
		if !errors.As(err, &fe) || fe.Class != fetch.ClassBlockedAddress || !errors.Is(err, fetch.ErrReservedAddress) {
			t.Errorf("%q: %v, want a blocked_address refusal", in, err)
		}
	}
	for _, in := range []string{"https://a.example.com:8443/", "https://a.example.com/x/../y", "ftp://a.example.com/", "a.example.com/x", "https://a.example.com/#f"} {
		_, err := crawler.TargetFor(in, pol)
		var fe *fetch.FetchError
		if err == nil || errors.As(err, &fe) {
			t.Errorf("%q: %v, want a bad-URL error", in, err)
		}
	}
	if _, err := crawler.TargetFor("http://a.example.com/", pol); !errors.Is(err, fetch.ErrSchemeNotAllowed) {
		t.Errorf("http without the allowance: %v", err)
	}
	// With the allowances, a loopback fleet's literal on any port is a target.
	pol.AllowInsecureHTTP = true
	pol.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	if got, err := crawler.TargetFor("http://127.0.0.7:8080/", pol); err != nil || got.CardURL != "http://127.0.0.7:8080/.well-known/agent-card.json" || !got.BareHost {
		t.Errorf("allowed loopback: %+v, %v", got, err)
	}
}
