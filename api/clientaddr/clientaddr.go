// Package clientaddr decides which client an HTTP request comes from, for
// rate limits (RELIABILITY.md A.8, I.78, I.82). The API and the web UI key
// their limits the same way, so a client cannot trade one surface's
// buckets for the other's.
package clientaddr

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Addr is the client of r: the TCP peer, unless the peer is one of the
// trusted proxies, in which case it is the right-most X-Forwarded-For hop
// that is not itself a trusted proxy. Hops a client wrote itself sit to the
// left of that and are never believed; a garbled chain falls back to the
// peer. The zero Addr means the peer address was unreadable.
func Addr(r *http.Request, trusted []netip.Prefix) netip.Addr {
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

// Key is the rate-limit key of a client address: IPv6 clients are grouped
// by /64, the block one subscriber usually holds, so rotating through it
// does not yield fresh buckets.
func Key(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is6():
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
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
