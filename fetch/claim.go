package fetch

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/cardexhq/cardex/cardurl"
)

// maxClaimBodyBytes bounds a host-claim answer: the token is 43 characters,
// so anything past a few hundred bytes is not one and is not read.
const maxClaimBodyBytes = 256

// DefaultClaimsPerHost is how many host-claim fetches may be in flight to
// one host at once (--claim-fetches-per-host).
const DefaultClaimsPerHost = 2

// HostBusyError: the host's claim fetches stayed at their cap for as long
// as one fetch may take, so this one was not sent. The caller answers 429
// and the client tries again after RetryAfter.
type HostBusyError struct {
	Host string
	Wait time.Duration
}

func (e *HostBusyError) Error() string {
	return "claim fetches to " + e.Host + " are at their cap; try again later"
}

// RetryAfter is how long the caller should wait before trying again.
func (e *HostBusyError) RetryAfter() time.Duration { return e.Wait }

// FetchClaim fetches a host-claim URL for the registry (docs/claims.md):
// the same network policy as every other fetch (reserved addresses refused
// at dial time), redirects followed only within the URL's own origin (a
// redirect elsewhere is cross_origin_redirect, never a request), a body
// of at most 256 bytes after decompression (more is too_large), and a 200
// answer (anything else is http_status). The body is returned as is; the
// registry compares it with the token.
//
// At most ClaimsPerHost claim fetches are in flight to one host, keyed by
// its canonical spelling (cardurl.HostKey), whatever port or scheme the
// claims name; the others wait their turn, in arrival order. Each also
// takes a slot of the host's shared budget (ShareHosts). A claim that has
// not got both within Config.ClaimWait (the fetch timeout) fails with
// *HostBusyError, nothing sent.
func (f *Fetcher) FetchClaim(ctx context.Context, rawURL string) ([]byte, error) {
	origin, err := OriginOf(rawURL)
	if err != nil {
		return nil, &FetchError{Class: ClassBlockedAddress, Hop: truncate(rawURL, 200), Err: wrapf(ErrBadURL, "%v", err)}
	}
	host := cardurl.HostKey(rawURL)
	wctx, cancel := context.WithTimeout(ctx, f.claimWait)
	defer cancel()
	release, err := f.claims.Acquire(wctx, host)
	if err == nil {
		defer release()
		// Then the host's slot of the budget crawls and probes share:
		// claims wait for it as crawls do, so probes never refuse one.
		if f.hosts != nil {
			var give func()
			if give, err = f.hosts.Acquire(wctx, host, UseClaim); err == nil {
				defer give()
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &HostBusyError{Host: host, Wait: f.claimWait}
		}
		return nil, err
	}
	resp, err := f.fetch(ctx, Request{URL: rawURL, Accept: "text/plain", FollowRedirects: true, SameOriginOnly: true, Origin: origin}, maxClaimBodyBytes)
	if err != nil {
		f.log.DebugContext(ctx, "claim fetch failed", "class", ClassOf(err), "err", err)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &FetchError{Class: ClassHTTPStatus, HTTPStatus: resp.StatusCode, Hop: resp.URL, Header: resp.Header,
			Err: wrapf(ErrHTTPStatus, "claim URL answered %d", resp.StatusCode)}
	}
	return resp.Body, nil
}
