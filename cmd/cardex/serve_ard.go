package main

import (
	"fmt"
	"net/url"
	"strings"
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
