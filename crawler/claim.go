package crawler

import (
	"context"
	"net/http"
)

// maxClaimBodyBytes bounds a host-claim answer: the token is 43 characters,
// so anything past a few hundred bytes is not one and is not read.
const maxClaimBodyBytes = 256

// FetchClaim fetches a host-claim URL for the registry (docs/claims.md):
// the same network policy as every other fetch (reserved addresses refused
// at dial time), redirects followed only within the URL's own origin (a
// redirect elsewhere is cross_origin_redirect, never a request), a body
// of at most 256 bytes after decompression (more is too_large), and a 200
// answer (anything else is http_status). The body is returned as is; the
// registry compares it with the token.
func (f *Fetcher) FetchClaim(ctx context.Context, url string) ([]byte, error) {
	origin, err := OriginOf(url)
	if err != nil {
		return nil, &FetchError{Class: ClassBlockedAddress, Hop: truncate(url, 200), Err: wrapf(ErrBadURL, "%v", err)}
	}
	resp, err := f.fetch(ctx, Request{URL: url, Accept: "text/plain", FollowRedirects: true, SameOriginOnly: true, Origin: origin}, maxClaimBodyBytes)
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
