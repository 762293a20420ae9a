package cardurl

import (
	"net/netip"

	"code.dny.dev/ssrf"
)

// specialPurpose is the IANA special-purpose address registry for IPv4 and
// IPv6 plus multicast, listed in full (docs/threats.md B.11, B.12). The ssrf
// guardian already covers most of it; this list is checked as well so that a
// gap in either one does not open a hole, and so the ranges that naive
// net.IP.Is* checks miss (NAT64, 6to4, IPv4-mapped, 192.0.0/24, 198.18/15,
// 240/4, broadcast, ::) are spelled out where a reviewer can see them.
var specialPurpose = []netip.Prefix{
	// IPv4 (iana-ipv4-special-registry).
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network"
	netip.MustParsePrefix("10.0.0.0/8"),         // private
	netip.MustParsePrefix("100.64.0.0/10"),      // shared address space (CGNAT)
	netip.MustParsePrefix("127.0.0.0/8"),        // loopback
	netip.MustParsePrefix("169.254.0.0/16"),     // link local, cloud metadata
	netip.MustParsePrefix("172.16.0.0/12"),      // private
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),       // TEST-NET-1
	netip.MustParsePrefix("192.31.196.0/24"),    // AS112-v4
	netip.MustParsePrefix("192.52.193.0/24"),    // AMT
	netip.MustParsePrefix("192.88.99.0/24"),     // deprecated 6to4 relay anycast
	netip.MustParsePrefix("192.168.0.0/16"),     // private
	netip.MustParsePrefix("192.175.48.0/24"),    // direct delegation AS112
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),    // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),     // TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),        // multicast
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved
	netip.MustParsePrefix("255.255.255.255/32"), // limited broadcast (inside 240/4, listed for clarity)

	// IPv6 (iana-ipv6-special-registry).
	netip.MustParsePrefix("::/128"),            // unspecified
	netip.MustParsePrefix("::1/128"),           // loopback
	netip.MustParsePrefix("::/96"),             // deprecated IPv4-compatible
	netip.MustParsePrefix("::ffff:0:0/96"),     // IPv4-mapped
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64 well-known prefix
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use IPv4/IPv6 translation
	netip.MustParsePrefix("100::/64"),          // discard-only
	netip.MustParsePrefix("100:0:0:1::/64"),    // dummy IPv6 prefix
	netip.MustParsePrefix("2001::/23"),         // IETF protocol assignments (Teredo, ORCHID, …)
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("2002::/16"),         // 6to4
	netip.MustParsePrefix("2620:4f:8000::/48"), // direct delegation AS112
	netip.MustParsePrefix("3fff::/20"),         // documentation
	netip.MustParsePrefix("5f00::/16"),         // SRv6 SIDs
	netip.MustParsePrefix("fc00::/7"),          // unique local (incl. fd00:ec2::254 metadata)
	netip.MustParsePrefix("fe80::/10"),         // link local
	netip.MustParsePrefix("fec0::/10"),         // deprecated site local
	netip.MustParsePrefix("ff00::/8"),          // multicast
}

// guardian is the ssrf library's deny list, used for its address check only:
// ports and networks are decided by the caller (the crawler's dial check
// layers the allow-list exceptions on top).
var guardian = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// IsReserved reports whether a is in a special-purpose or multicast range:
// anything the production policy never dials. IPv4-mapped IPv6 addresses are
// reserved as such (::ffff:0:0/96), whatever IPv4 address they carry.
func IsReserved(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("")
	for _, p := range specialPurpose {
		if p.Contains(a) {
			return true
		}
	}
	return guardian.SafeAddr(a) != nil
}
