package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

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

// webFederatedResults is how many peer results the web catalogue shows.
const webFederatedResults = 10

// webFederate is the web catalogue's federated search (--web-federation
// with --ard-peer): the peers' first results for the text, merged by
// reciprocal rank fusion, within the federation deadline. Nil when off.
func (c *serveConfig) webFederate() func(ctx context.Context, text string) []discover.ARDResult {
	if !c.WebFederation || len(c.ARDPeers) == 0 || c.ardCall == nil {
		return nil
	}
	peers, call := []string(c.ARDPeers), c.ardCall
	return func(ctx context.Context, text string) []discover.ARDResult {
		lists, _ := discover.AskPeers(ctx, peers, call, text, nil, webFederatedResults, 0)
		return discover.Fuse(lists, webFederatedResults)
	}
}
