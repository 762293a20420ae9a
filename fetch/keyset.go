package fetch

import (
	"context"
	"net/http"
)

// keySetAccept asks for a JWKS and takes plain JSON.
const keySetAccept = "application/jwk-set+json, application/json"

// FetchKeySet fetches a JWKS for the verifier: the same network policy, no
// redirects (docs/security.md "Network policy"), a body of at most Policy.MaxKeySetBytes after
// decompression (docs/threats.md D.44), and a body that must look like JSON.
// The key-count cap and key filtering are the verifier's.
func (f *Fetcher) FetchKeySet(ctx context.Context, url string) ([]byte, error) {
	return f.fetchKeySet(ctx, url, "")
}

func (f *Fetcher) fetchKeySet(ctx context.Context, url, origin string) ([]byte, error) {
	resp, err := f.fetch(ctx, Request{URL: url, Accept: keySetAccept, Origin: origin}, f.policy.MaxKeySetBytes)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &FetchError{Class: ClassHTTPStatus, HTTPStatus: resp.StatusCode, Hop: resp.URL, Header: resp.Header,
			Err: wrapf(ErrHTTPStatus, "key set answered %d", resp.StatusCode)}
	}
	if err := resp.CheckJSON(); err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// OriginKeySets fetches key sets for one agent and refuses, without a
// request, every URL that is not on that agent's origin: an off-origin jku
// is never fetched (docs/threats.md D.43, docs/verification.md). It has the
// verifier's KeySetFetcher method.
type OriginKeySets struct {
	f      *Fetcher
	origin string
}

// KeySetsFor binds key-set fetches to origin (scheme://host[:port]).
func (f *Fetcher) KeySetsFor(origin string) (*OriginKeySets, error) {
	o, err := OriginOf(origin)
	if err != nil {
		return nil, err
	}
	return &OriginKeySets{f: f, origin: o}, nil
}

// FetchKeySet fetches url if it is on the bound origin.
func (k *OriginKeySets) FetchKeySet(ctx context.Context, url string) ([]byte, error) {
	return k.f.fetchKeySet(ctx, url, k.origin)
}
