package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/cardexhq/cardex/crawler"
)

// netPolicyFlags are the network policy of CONTRACT.md §2 for the commands
// that fetch outside `serve` (lint and verify with a URL). With none given
// the production policy applies: https on port 443 to public addresses only,
// checked at dial time by the crawler's hardened fetcher.
type netPolicyFlags struct {
	nets     prefixList
	insecure bool
	caFile   string
	timeout  time.Duration
}

func (n *netPolicyFlags) register(fs *flag.FlagSet) {
	fs.Var(&n.nets, "allow-networks", "reserved `CIDR` ranges that may be dialed, on any port (comma-separated, repeatable)")
	fs.BoolVar(&n.insecure, "allow-insecure-http", false, "accept http:// card and key set URLs")
	fs.StringVar(&n.caFile, "ca-file", "", "extra trusted root certificates (`PEM` file)")
	fs.DurationVar(&n.timeout, "timeout", 10*time.Second, "limit for each fetch, redirects and body included")
}

// fetcher builds the hardened fetcher for these settings.
func (n *netPolicyFlags) fetcher() (*crawler.Fetcher, error) {
	if n.timeout <= 0 {
		return nil, errors.New("--timeout must be positive")
	}
	pol, err := fetchPolicy(crawlNetwork{AllowNetworks: n.nets, AllowInsecureHTTP: n.insecure}, n.caFile, n.timeout)
	if err != nil {
		return nil, err
	}
	return crawler.New(crawler.Config{Policy: pol, Logger: slog.New(slog.DiscardHandler)})
}

// cardFetcherFor fetches a card the way the crawler does: redirects only
// within the URL's origin, the body limit after decompression, and a body
// that must look like JSON (RELIABILITY.md B.15, B.20, C.28).
func cardFetcherFor(f *crawler.Fetcher) cardFetcher {
	return func(ctx context.Context, url string) ([]byte, error) {
		resp, err := f.Fetch(ctx, crawler.Request{URL: url, FollowRedirects: true, SameOriginOnly: true})
		if err != nil {
			return nil, err
		}
		if err := resp.CheckJSON(); err != nil {
			return nil, err
		}
		return resp.Body, nil
	}
}

// describeFetchError names the crawler's error class (CONTRACT.md §2) so a
// script can tell a blocked address from a timeout.
func describeFetchError(err error) string {
	if fe, ok := errors.AsType[*crawler.FetchError](err); ok {
		return fmt.Sprintf("%s: %v", fe.Class, err)
	}
	return err.Error()
}
