package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Request is one fetch. The zero value of the switches follows no redirect.
type Request struct {
	URL string
	// Validators stored from the last 200 (A2A §8.6 caching); sent as
	// If-None-Match / If-Modified-Since when set.
	ETag, LastModified string
	// Accept defaults to application/json.
	Accept string
	// FollowRedirects follows up to Policy.MaxRedirects redirects.
	FollowRedirects bool
	// SameOriginOnly refuses a redirect to another origin with
	// cross_origin_redirect (card fetches, docs/security.md "Network policy").
	SameOriginOnly bool
	// Origin, when set, is the only origin the URL (and every hop) may be
	// on; anything else is refused without a request (D.43).
	Origin string

	// Method defaults to GET; Body is sent with it on every hop (the
	// liveness prober's JSON-RPC call, docs/liveness.md).
	Method string
	Body   []byte
	// Header is set over the default request headers (Accept, A2A-Version).
	Header http.Header
	// AnyStatus returns the final response whatever its status, with its
	// body, instead of failing a non-2xx with http_status: the prober
	// classifies a reply by its body.
	AnyStatus bool
	// MaxBytes, when positive and below the policy's body limit, is the
	// body limit of this request.
	MaxBytes int64
}

// Response is a successful fetch: a 2xx with its body, or a 304.
type Response struct {
	URL         string // the final URL, after redirects
	StatusCode  int
	Header      http.Header
	Body        []byte // nil for 304
	NotModified bool
	Duration    time.Duration
	// Bytes counts the HTTP response bytes read from the network over all
	// hops: headers and body as sent (before decompression).
	Bytes int64
}

// Fetch requests req.URL (GET unless req.Method says otherwise) under the
// policy and returns the body of a 2xx or a 304 (of any status with
// req.AnyStatus). Every failure is a *FetchError.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	limit := f.policy.MaxBodyBytes
	if req.MaxBytes > 0 && req.MaxBytes < limit {
		limit = req.MaxBytes
	}
	resp, err := f.fetch(ctx, req, limit)
	if err != nil {
		// Never the body: a failed fetch logs its class and hop only.
		f.log.DebugContext(ctx, "fetch failed", "url", truncate(req.URL, 512), "class", ClassOf(err), "err", err)
	}
	return resp, err
}

func (f *Fetcher) fetch(ctx context.Context, req Request, limit int64) (*Response, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, f.policy.Timeout)
	defer cancel()

	u, fe := f.parseTarget(req.URL)
	if fe != nil {
		return nil, fe
	}
	origin := Origin(u)
	if req.Origin != "" {
		want, err := OriginOf(req.Origin)
		if err != nil || want != origin {
			return nil, &FetchError{Class: ClassBlockedAddress, Hop: u.Redacted(), Err: wrapf(ErrOffOrigin, "want %s", req.Origin)}
		}
	}
	visited := map[string]bool{u.String(): true}
	var total int64
	for hops := 0; ; hops++ {
		resp, body, n, fe := f.hop(ctx, u, req, limit)
		total += n
		if fe != nil {
			return nil, fe
		}
		if isRedirect(resp.StatusCode) {
			next, fe := f.nextHop(u, origin, resp, req, visited, hops)
			if fe != nil {
				return nil, fe
			}
			u = next
			continue
		}
		out := &Response{
			URL:        u.String(),
			StatusCode: resp.StatusCode,
			Header:     resp.Header,
			Body:       body,
			Duration:   time.Since(start),
			Bytes:      total,
		}
		out.NotModified = resp.StatusCode == http.StatusNotModified
		f.log.DebugContext(ctx, "fetched", "url", out.URL, "status", out.StatusCode, "bytes", total, "duration", out.Duration)
		return out, nil
	}
}

// hop performs one request. For a 2xx it returns the whole body; for a 304
// or a redirect, none; anything else is an http_status error.
func (f *Fetcher) hop(ctx context.Context, u *url.URL, req Request, limit int64) (*http.Response, []byte, int64, *FetchError) {
	hopURL := u.Redacted()
	hctx, st := withHop(ctx)
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	var reqBody io.Reader
	if req.Body != nil {
		reqBody = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(hctx, method, u.String(), reqBody)
	if err != nil {
		return nil, nil, 0, &FetchError{Class: ClassBlockedAddress, Hop: hopURL, Err: wrapf(ErrBadURL, "%v", err)}
	}
	accept := req.Accept
	if accept == "" {
		accept = "application/json"
	}
	hr.Header.Set("Accept", accept)
	// docs/cards.md: servers in compat mode answer the v0.3 shape unless
	// asked for 1.0.
	hr.Header.Set("A2A-Version", "1.0")
	hr.Header.Set("User-Agent", f.policy.UserAgent)
	if req.ETag != "" {
		hr.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hr.Header.Set("If-Modified-Since", req.LastModified)
	}
	for k, v := range req.Header {
		hr.Header[http.CanonicalHeaderKey(k)] = v
	}
	resp, err := f.transport.RoundTrip(hr)
	if err != nil {
		return nil, nil, st.responseBytes(), f.classify(ctx, st, hopURL, err)
	}
	defer resp.Body.Close()
	st.phase.Store(int32(phaseBody))
	code := resp.StatusCode
	switch {
	case code == http.StatusNotModified || isRedirect(code):
		return resp, nil, st.responseBytes(), nil
	case (code < 200 || code > 299) && !req.AnyStatus:
		return nil, nil, st.responseBytes(), &FetchError{Class: ClassHTTPStatus, HTTPStatus: code, Hop: hopURL, Header: resp.Header,
			Err: wrapf(ErrHTTPStatus, "%s", resp.Status)}
	}
	if resp.ContentLength > limit {
		return nil, nil, st.responseBytes(), &FetchError{Class: ClassTooLarge, HTTPStatus: code, Hop: hopURL,
			Err: wrapf(ErrBodyTooLarge, "Content-Length %d, limit %d", resp.ContentLength, limit)}
	}
	// B.20, B.21: read one byte past the limit (of decompressed bytes) and
	// fail if it arrives; a card is never truncated and then parsed.
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, st.responseBytes(), f.classify(ctx, st, hopURL, err)
	}
	if int64(len(body)) > limit {
		return nil, nil, st.responseBytes(), &FetchError{Class: ClassTooLarge, HTTPStatus: code, Hop: hopURL,
			Err: wrapf(ErrBodyTooLarge, "more than %d bytes", limit)}
	}
	return resp, body, st.responseBytes(), nil
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}
