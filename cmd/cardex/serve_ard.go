package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cardexhq/cardex/crawler"
	"github.com/cardexhq/cardex/discover"
)

// peerList is --ard-peer: ARD registry base URLs a federated search asks
// (docs/discovery.md "Federated search"); repeatable, comma-separated.
type peerList []string

func (p *peerList) String() string {
	if p == nil {
		return ""
	}
	return strings.Join(*p, ",")
}

func (p *peerList) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSuffix(strings.TrimSpace(part), "/")
		if part == "" {
			continue
		}
		u, err := url.Parse(part)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("%q is not an absolute http(s) URL without query, fragment or userinfo", part)
		}
		*p = append(*p, part)
	}
	return nil
}

// ardPeerCall is how a federated search reaches a peer: a POST through
// the crawler's hardened client, under its network policy (reserved
// addresses refused after DNS and on every redirect hop, redirects kept on
// the peer's origin, the time limit), reading at most
// discover.MaxPeerBytes.
func ardPeerCall(f *crawler.Fetcher) discover.PeerCall {
	return func(ctx context.Context, u string, body []byte) ([]byte, error) {
		resp, err := f.Fetch(ctx, crawler.Request{URL: u, Method: http.MethodPost, Body: body,
			Header: http.Header{"Content-Type": {"application/json"}}, Accept: "application/json",
			FollowRedirects: true, SameOriginOnly: true, MaxBytes: discover.MaxPeerBytes})
		if err != nil {
			return nil, err
		}
		return resp.Body, nil
	}
}
