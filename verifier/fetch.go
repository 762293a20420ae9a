package verifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// KeySetFetcher fetches the bytes of a JWKS. The crawler implements it with
// its hardened client (SSRF guard at dial time, CONTRACT.md §2); the CLI uses
// NewHTTPKeySetFetcher. An implementation must not follow redirects and must
// not return more than MaxKeySetBytes (it may return ErrKeySetTooLarge).
type KeySetFetcher interface {
	FetchKeySet(ctx context.Context, url string) ([]byte, error)
}

// HTTPFetcherOptions configures NewHTTPKeySetFetcher.
type HTTPFetcherOptions struct {
	Timeout   time.Duration // whole request; default 5 s
	AllowHTTP bool          // accept http:// URLs (CONTRACT.md §2 --allow-insecure-http)
	// Transport replaces the default transport (tests, extra roots). Its
	// Proxy setting is the caller's responsibility.
	Transport http.RoundTripper
}

type httpKeySetFetcher struct {
	client    *http.Client
	allowHTTP bool
}

// NewHTTPKeySetFetcher returns a plain fetcher for key sets: https only unless
// AllowHTTP, no redirects, no proxy from the environment (RELIABILITY.md
// B.24), a 5 s timeout and the 64 KiB cap (D.44).
func NewHTTPKeySetFetcher(opts HTTPFetcherOptions) KeySetFetcher {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	rt := opts.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.MaxResponseHeaderBytes = 64 << 10
		rt = t
	}
	return &httpKeySetFetcher{
		allowHTTP: opts.AllowHTTP,
		client: &http.Client{
			Transport: rt,
			Timeout:   opts.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
}

func (f *httpKeySetFetcher) FetchKeySet(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySetFetch, err)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && f.allowHTTP:
	default:
		return nil, fmt.Errorf("%w: %s", ErrInsecureURL, rawURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySetFetch, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySetFetch, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, fmt.Errorf("%w (status %d)", ErrKeySetRedirect, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %d", ErrKeySetStatus, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxKeySetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySetFetch, err)
	}
	if len(body) > MaxKeySetBytes {
		return nil, ErrKeySetTooLarge
	}
	return body, nil
}

// isContextError reports whether err came from the caller giving up, which
// says nothing about the key set and must not be cached.
func isContextError(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
