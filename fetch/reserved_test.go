package fetch_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/fetch"
)

// docs/threats.md B.11 and B.12: every reserved spelling is refused by the
// production check, including those naive net.IP.Is* checks miss.
func TestReservedAddressesB11B12(t *testing.T) {
	reserved := []string{
		// B.11
		"127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "fd00:ec2::254", "100.64.0.1", "100.127.255.255", "::1", "fe80::1",
		// B.12
		"64:ff9b::a9fe:a9fe", "64:ff9b:1::1", "2002:7f00:1::", "2002:c0a8:101::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8",
		"0.0.0.0", "0.1.2.3", "192.0.0.1", "192.0.0.170", "198.18.0.1", "198.19.255.255", "240.0.0.1",
		"255.255.255.255", "224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1", "::",
		// the rest of the IANA registries
		"192.0.2.1", "198.51.100.1", "203.0.113.1", "192.88.99.1", "192.31.196.1", "192.52.193.1", "192.175.48.1",
		"100::1", "2001::1", "2001:db8::1", "2001:2::1", "2620:4f:8000::1", "3fff::1", "5f00::1", "fc00::1", "fec0::1", "::127.0.0.1",
	}
	p := fetch.DefaultPolicy()
	for _, s := range reserved {
		a := netip.MustParseAddr(s)
		if !cardurl.IsReserved(a) {
			t.Errorf("IsReserved(%s) = false", s)
		}
		err := p.CheckAddr(netip.AddrPortFrom(a, 443))
		if !errors.Is(err, fetch.ErrReservedAddress) {
			t.Errorf("CheckAddr(%s:443) = %v, want ErrReservedAddress", s, err)
		}
	}
}

func TestPublicAddressesAllowedOn443(t *testing.T) {
	p := fetch.DefaultPolicy()
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111", "2a00:1450:4001::200e"} {
		a := netip.MustParseAddr(s)
		if cardurl.IsReserved(a) {
			t.Errorf("IsReserved(%s) = true", s)
		}
		if err := p.CheckAddr(netip.AddrPortFrom(a, 443)); err != nil {
			t.Errorf("CheckAddr(%s:443) = %v", s, err)
		}
		// B.17: only 443 by default; 80 only for --allow-insecure-http.
		for _, port := range []uint16{80, 8443, 22} {
			if err := p.CheckAddr(netip.AddrPortFrom(a, port)); !errors.Is(err, fetch.ErrPortNotAllowed) {
				t.Errorf("CheckAddr(%s:%d) = %v, want ErrPortNotAllowed", s, port, err)
			}
		}
	}
	p.AllowInsecureHTTP = true
	if err := p.CheckAddr(netip.MustParseAddrPort("8.8.8.8:80")); err != nil {
		t.Errorf("port 80 with AllowInsecureHTTP: %v", err)
	}
}

func TestAllowNetworksAnyPort(t *testing.T) {
	p := fetch.DefaultPolicy()
	p.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("::1/128")}
	for _, s := range []string{"10.1.2.3:8080", "10.1.255.255:1", "[::1]:9000", "[::ffff:10.1.0.7]:8443"} {
		if err := p.CheckAddr(netip.MustParseAddrPort(s)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want allowed", s, err)
		}
	}
	for _, s := range []string{"10.2.0.1:443", "127.0.0.1:443", "169.254.169.254:80"} {
		if err := p.CheckAddr(netip.MustParseAddrPort(s)); !errors.Is(err, fetch.ErrReservedAddress) {
			t.Errorf("CheckAddr(%s) = %v, want ErrReservedAddress", s, err)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := fetch.DefaultPolicy().Validate(); err != nil {
		t.Fatalf("default policy: %v", err)
	}
	bad := fetch.DefaultPolicy()
	bad.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("10.1.2.3/8")}
	if bad.Validate() == nil {
		t.Error("a prefix with host bits set was accepted")
	}
	bad = fetch.DefaultPolicy()
	bad.Timeout = 0
	if _, err := fetch.New(fetch.Config{Policy: bad}); err == nil {
		t.Error("New accepted a zero timeout")
	}
	if ua := fetch.DefaultPolicy().UserAgent; len(ua) < 7 || ua[:7] != "Cardex/" {
		t.Errorf("User-Agent %q does not name Cardex", ua)
	}
}
