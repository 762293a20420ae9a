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
// within the deadline, never stored, at most size results. A peer that
// fails or is late is logged and left out.
func (s *server) ardFederate(ctx context.Context, local []discover.ARDResult, q ardQuery, size int) []discover.ARDResult {
	lists, status := discover.AskPeers(ctx, s.ard.Peers, s.ard.Call, q.text, q.tags, size, s.ard.Deadline)
	for _, st := range status {
		if st.Err != nil {
			s.log.Info("ard peer left out", "peer", st.Peer, "err", clip(strings.TrimSpace(st.Err.Error()), 300))
		}
	}
	return discover.Fuse(append([][]discover.ARDResult{local}, lists...), size)
}
