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

var (
	errKeySetRedirect = errors.New("verifier test: key set fetch was redirected")
	errKeySetStatus   = errors.New("verifier test: key set fetch got a non-200 status")
	errInsecureURL    = errors.New("verifier test: key set URL is not https")
)

// loopbackFetcherOptions configures newLoopbackKeySetFetcher.
type loopbackFetcherOptions struct {
	Timeout   time.Duration // whole request; default 5 s
	AllowHTTP bool          // accept http:// URLs (docs/security.md "Network policy" --allow-insecure-http)
	// Transport replaces the default transport (tests, extra roots). Its
	// Proxy setting is the caller's responsibility.
	Transport http.RoundTripper
}

type httpKeySetFetcher struct {
	client    *http.Client
	allowHTTP bool
}

// newLoopbackKeySetFetcher is the tests' plain key-set client for loopback
// servers: https only unless AllowHTTP, no redirects, no proxy, a timeout
// and the 64 KiB cap. It has no network policy, so it lives only in tests;
// production fetches go through the crawler's hardened fetcher.
func newLoopbackKeySetFetcher(opts loopbackFetcherOptions) KeySetFetcher {
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
		return nil, fmt.Errorf("%w: %s", errInsecureURL, rawURL)
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
		return nil, fmt.Errorf("%w (status %d)", errKeySetRedirect, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %d", errKeySetStatus, resp.StatusCode)
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
