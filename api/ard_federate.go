package api

import (
	"context"
	"net/url"
	"strings"

	"github.com/cardexhq/cardex/aicatalog"
	"github.com/cardexhq/cardex/discover"
)

// referrals are the peers as ARD registry entries, for federation
// "referrals": the client decides which to ask.
func (a ARDConfig) referrals() []discover.ARDEntry {
	out := make([]discover.ARDEntry, 0, len(a.Peers))
	for _, p := range a.Peers {
		out = append(out, discover.ARDEntry{Identifier: aicatalog.RegistryIdentifier(p), DisplayName: peerName(p),
			Type: aicatalog.TypeRegistry, URL: p})
	}
	return out
}

// peerName is how a referral names a peer: its host.
func peerName(p string) string {
	if u, err := url.Parse(p); err == nil && u.Host != "" {
		return "ARD registry at " + u.Host
	}
	return p
}

// ardFederate asks the peers for the same search and merges their results
// with local ones by reciprocal rank fusion (discover.Fuse): what arrived
// within the deadline, never stored. Every local result of the page stays
// (the page token continues after them, so one dropped here would never
// be shown), and the best size peer results join them in fused order. A
// peer that fails or is late is logged and left out.
func (s *server) ardFederate(ctx context.Context, local []discover.ARDResult, q ardQuery, size int) []discover.ARDResult {
	lists, status := discover.AskPeers(ctx, s.ard.Peers, s.ard.Call, q.text, q.tags, size, s.ard.Deadline)
	for _, st := range status {
		if st.Err != nil {
			s.log.Info("ard peer left out", "peer", st.Peer, "err", clip(strings.TrimSpace(st.Err.Error()), 300))
		}
	}
	all := append([][]discover.ARDResult{local}, lists...)
	n := 0
	for _, l := range all {
		n += len(l)
	}
	self := map[string]bool{}
	for _, r := range local {
		self[r.Identifier] = true
	}
	out := make([]discover.ARDResult, 0, len(local)+size)
	peers := 0
	for _, r := range discover.Fuse(all, n) {
		switch {
		case self[r.Identifier]:
		case peers < size:
			peers++
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}
