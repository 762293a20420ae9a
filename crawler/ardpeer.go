package crawler

import (
	"context"
	"net/http"

	"github.com/cardexhq/cardex/fetch"
)

// MaxPeerBytes bounds the answer of an ARD peer a federated search reads.
const MaxPeerBytes = 1 << 20

// ARDPeerCall is how a federated ARD search reaches a peer registry
// (docs/discovery.md "Federated search"): a POST of body to url through
// f, under its network policy like every fetch (reserved addresses
// refused after DNS and on every redirect hop, redirects kept on the
// peer's origin, the policy's time limit), reading at most MaxPeerBytes.
func ARDPeerCall(f *fetch.Fetcher) func(ctx context.Context, url string, body []byte) ([]byte, error) {
	return func(ctx context.Context, url string, body []byte) ([]byte, error) {
		resp, err := f.Fetch(ctx, fetch.Request{URL: url, Method: http.MethodPost, Body: body,
			Header: http.Header{"Content-Type": {"application/json"}}, Accept: "application/json",
			FollowRedirects: true, SameOriginOnly: true, MaxBytes: MaxPeerBytes})
		if err != nil {
			return nil, err
		}
		return resp.Body, nil
	}
}
