package ratelimit

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	proxy := netip.MustParsePrefix("10.0.0.0/8")
	cases := []struct {
		name    string
		proxies []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"peer without proxies", nil, "203.0.113.5:4000", nil, "203.0.113.5"},
		{"header ignored from untrusted peer", nil, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"trusted proxy", []netip.Prefix{proxy}, "10.1.1.1:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client-written hops are not believed", []netip.Prefix{proxy}, "10.1.1.1:4000", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", []netip.Prefix{proxy}, "10.1.1.1:4000", []string{"198.51.100.1, 10.2.2.2", "10.3.3.3"}, "198.51.100.1"},
		{"garbled chain falls back to peer", []netip.Prefix{proxy}, "10.1.1.1:4000", []string{"nonsense"}, "10.1.1.1"},
		{"mapped IPv4 peer", nil, "[::ffff:203.0.113.5]:4000", nil, "203.0.113.5"},
		{"mapped IPv4 hop", []netip.Prefix{proxy}, "10.1.1.1:4000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"unreadable peer", nil, "not-an-address", nil, "invalid IP"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientAddr(r, tc.proxies).String(); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestKeyGroupsIPv6By64(t *testing.T) {
	a := AddrKey(netip.MustParseAddr("2001:db8:1:2:aaaa::1"))
	b := AddrKey(netip.MustParseAddr("2001:db8:1:2:ffff::9"))
	c := AddrKey(netip.MustParseAddr("2001:db8:1:3::1"))
	if a != b || a == c || a != "2001:db8:1:2::/64" {
		t.Fatalf("a=%s b=%s c=%s", a, b, c)
	}
	if k := AddrKey(netip.MustParseAddr("192.0.2.7")); k != "192.0.2.7" {
		t.Fatalf("v4 key %s", k)
	}
	if k := AddrKey(netip.Addr{}); k != "unknown" {
		t.Fatalf("invalid key %s", k)
	}
}
