package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/cardexhq/cardex/fetch"
)

// netPolicyFlags are the network policy of docs/security.md "Network policy" for the commands
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
func (n *netPolicyFlags) fetcher() (*fetch.Fetcher, error) {
	if n.timeout <= 0 {
		return nil, errors.New("--timeout must be positive")
	}
	pol, err := fetchPolicy(crawlNetwork{AllowNetworks: n.nets, AllowInsecureHTTP: n.insecure}, n.caFile, n.timeout)
	if err != nil {
		return nil, err
	}
	return fetch.New(fetch.Config{Policy: pol, Logger: slog.New(slog.DiscardHandler)})
}

// cardFetcherFor fetches a card the way the crawler does: redirects only
// within the URL's origin, the body limit after decompression, and a body
// that must look like JSON (docs/threats.md B.15, B.20, C.28).
func cardFetcherFor(f *fetch.Fetcher) cardFetcher {
	return func(ctx context.Context, url string) ([]byte, error) {
		resp, err := f.Fetch(ctx, fetch.Request{URL: url, FollowRedirects: true, SameOriginOnly: true})
		if err != nil {
			return nil, err
		}
		if err := resp.CheckJSON(); err != nil {
			return nil, err
		}
		return resp.Body, nil
	}
}

// describeFetchError is a fetch failure for a person: the crawler's error
// class once (a script can still tell a blocked address from a timeout),
// what failed, and the flag that would allow it when one would.
func describeFetchError(err error) string {
	class, msg := fetchErrorParts(err)
	if class == "" {
		return msg
	}
	return class + ": " + msg
}

// fetchErrorParts splits a fetch failure into its class ("" when err is
// not a fetch error) and the rest of the message, with the hint.
func fetchErrorParts(err error) (class, msg string) {
	fe, ok := errors.AsType[*fetch.FetchError](err)
	if !ok {
		return "", err.Error()
	}
	var parts []string
	if fe.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", fe.HTTPStatus))
	}
	if fe.Hop != "" {
		parts = append(parts, fe.Hop)
	}
	if fe.Err != nil {
		parts = append(parts, fe.Err.Error())
	}
	msg = strings.Join(parts, ": ")
	if hint := fetchHint(fe); hint != "" {
		msg += " (" + hint + ")"
	}
	return fe.Class, msg
}

// fetchHint names the flag that would let the fetch through, for the
// failures a flag of these commands decides.
func fetchHint(fe *fetch.FetchError) string {
	switch {
	case errors.Is(fe, fetch.ErrSchemeNotAllowed):
		return "pass --allow-insecure-http to fetch http:// URLs"
	case errors.Is(fe, fetch.ErrReservedAddress), errors.Is(fe, fetch.ErrPortNotAllowed):
		if p, ok := refusedPrefix(fe); ok {
			return "pass --allow-networks " + p + " to allow it"
		}
		return "pass --allow-networks with the address's range to allow it"
	case fe.Class == fetch.ClassTimeout:
		return "--timeout sets the limit"
	case fe.Class == fetch.ClassTLS:
		return "--ca-file adds a trusted root certificate"
	}
	return ""
}

// refusedPrefix is the single-address range of the address a dial check
// refused, read from the end of its message ("… reserved address 10.0.0.1").
func refusedPrefix(fe *fetch.FetchError) (string, bool) {
	if fe.Err == nil {
		return "", false
	}
	msg := fe.Err.Error()
	word := msg[strings.LastIndexByte(msg, ' ')+1:]
	if ap, err := netip.ParseAddrPort(word); err == nil {
		word = ap.Addr().String()
	}
	a, err := netip.ParseAddr(word)
	if err != nil {
		return "", false
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()).String(), true
}
