package ratelimit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the client of r: the TCP peer, unless the peer is one of the
// trusted proxies, in which case it is the right-most X-Forwarded-For hop
// that is not itself a trusted proxy. Hops a client wrote itself sit to the
// left of that and are never believed; a garbled chain falls back to the
// peer. The zero address means the peer address was unreadable.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !contains(trusted, peer) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return peer
			}
			if a = a.Unmap(); !contains(trusted, a) {
				return a
			}
		}
	}
	return peer
}

// AddrKey is the rate-limit key of a client address: IPv6 clients are grouped
// by /64, the block one subscriber usually holds, so rotating through it
// does not yield fresh buckets.
func AddrKey(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is6():
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// ClientKey is the rate-limit key of r's client: AddrKey(ClientAddr(r,
// trusted)).
func ClientKey(r *http.Request, trusted []netip.Prefix) string {
	return AddrKey(ClientAddr(r, trusted))
}

func contains(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}
