package verifier

import (
	"context"
	"errors"
)

// KeySetFetcher fetches the bytes of a JWKS. The crawler implements it with
// its hardened client (network policy checked at dial time, no redirects,
// bounded body), and the CLI uses the crawler's too: the verifier itself
// never dials. An implementation must not follow redirects and must not
// return more than MaxKeySetBytes (it may return ErrKeySetTooLarge).
type KeySetFetcher interface {
	FetchKeySet(ctx context.Context, url string) ([]byte, error)
}

// isContextError reports whether err came from the caller giving up, which
// says nothing about the key set and must not be cached.
func isContextError(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
