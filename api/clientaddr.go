package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr is the address rate limits are keyed by: the TCP peer, unless
// the peer is a configured trusted proxy, in which case it is the
// right-most X-Forwarded-For hop that is not itself a trusted proxy. Hops a
// client wrote itself sit to the left of that and are never believed.
func (s *server) clientAddr(r *http.Request) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !s.trusted(peer) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return peer // a garbled chain: fall back to what we know
			}
			a = a.Unmap()
			if !s.trusted(a) {
				return a
			}
		}
	}
	return peer
}

func (s *server) trusted(a netip.Addr) bool {
	for _, p := range s.proxies {
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

// limitKey groups IPv6 clients by /64, the block one subscriber usually
// holds, so rotating through it does not yield fresh buckets.
func limitKey(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
