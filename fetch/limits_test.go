package fetch_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// B.20: 2 GiB of chunked JSON, and a truthful 2 GiB Content-Length, fail
// with too_large after reading at most the limit.
func TestHugeBodyB20(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	for _, declare := range []bool{false, true} {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HugeBody, DeclareLength: declare})
		_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
		wantClass(t, err, fetch.ClassTooLarge)
		if !errors.Is(err, fetch.ErrBodyTooLarge) {
			t.Errorf("declared=%v: %v", declare, err)
		}
	}
}

// B.20 (Boulder TestLimitedReader): exactly the limit is a card; one byte
// more is too_large, never a truncated card.
func TestBodyLimitBoundaryB20(t *testing.T) {
	p := loopbackPolicy()
	p.MaxBodyBytes = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Write(bytes.Repeat([]byte(" "), n))
	}))
	defer srv.Close()
	f := newFetcher(t, fetch.Config{Policy: p})
	for _, mode := range []string{"", "&chunked=1"} {
		resp, err := f.Fetch(t.Context(), fetch.Request{URL: srv.URL + "/?n=1000" + mode})
		if err != nil || len(resp.Body) != 1000 {
			t.Errorf("at the limit%s: %v", mode, err)
		}
		_, err = f.Fetch(t.Context(), fetch.Request{URL: srv.URL + "/?n=1001" + mode})
		wantClass(t, err, fetch.ClassTooLarge)
	}
}

// B.21: 10 GiB of gzip bomb; the limit applies to inflated bytes and the
// fetch stops after about the limit's worth of compressed data.
func TestGzipBombB21(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.GzipBomb})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
	wantClass(t, err, fetch.ClassTooLarge)
	if !errors.Is(err, fetch.ErrBodyTooLarge) {
		t.Errorf("err = %v", err)
	}
	// A bomb below the limit inflates fine: the transport really decompresses.
	small := fleet.Add(agentfleet.Agent{Behavior: agentfleet.GzipBomb, Size: 1})
	p := loopbackPolicy()
	p.MaxBodyBytes = 1 << 20
	f2 := newFetcher(t, fetch.Config{Policy: p})
	resp, err := f2.Fetch(t.Context(), fetch.Request{URL: small.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) != 1<<20 || resp.Bytes > 64<<10 {
		t.Errorf("inflated %d bytes from %d read; want 1 MiB from a few KiB", len(resp.Body), resp.Bytes)
	}
}

// B.22: 100 KiB of response headers fail cleanly with too_large.
func TestHugeHeadersB22(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HugeHeaders})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
	wantClass(t, err, fetch.ClassTooLarge)
	if !errors.Is(err, fetch.ErrHeadersTooLarge) {
		t.Errorf("err = %v", err)
	}
	// With a limit above the block the same agent is fine.
	p := loopbackPolicy()
	p.MaxHeaderBytes = 256 << 10
	f2 := newFetcher(t, fetch.Config{Policy: p})
	if _, err := f2.Fetch(t.Context(), fetch.Request{URL: a.URL()}); err != nil {
		t.Errorf("with a 256 KiB header limit: %v", err)
	}
}

// B.20–B.22 hold over TLS too (the header accounting counts decrypted bytes).
func TestLimitsOverTLS(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{TLS: true, BaseAddr: "127.0.0.44"})
	p := loopbackPolicy()
	p.RootCAs = fleet.CertPool()
	f := newFetcher(t, fetch.Config{Policy: p})
	for _, c := range []struct {
		b   agentfleet.Behavior
		err error
	}{
		{agentfleet.HugeHeaders, fetch.ErrHeadersTooLarge},
		{agentfleet.GzipBomb, fetch.ErrBodyTooLarge},
		{agentfleet.HugeBody, fetch.ErrBodyTooLarge},
	} {
		a := fleet.Add(agentfleet.Agent{Behavior: c.b})
		_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
		wantClass(t, err, fetch.ClassTooLarge)
		if !errors.Is(err, c.err) {
			t.Errorf("%s over TLS: %v", c.b, err)
		}
	}
	ok := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	if _, err := f.Fetch(t.Context(), fetch.Request{URL: ok.URL()}); err != nil {
		t.Errorf("normal agent over TLS: %v", err)
	}
}
