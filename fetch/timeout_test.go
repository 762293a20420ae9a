package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// B.18: a slow drip and a hang after the headers both end at the total
// deadline, classified as timeouts while reading the body.
func TestSlowlorisAndHangB18(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{DripInterval: 20 * time.Millisecond})
	p := loopbackPolicy()
	p.Timeout = 300 * time.Millisecond
	f := newFetcher(t, fetch.Config{Policy: p})
	for _, b := range []agentfleet.Behavior{agentfleet.SlowDrip, agentfleet.HangAfterHeaders} {
		a := fleet.Add(agentfleet.Agent{Behavior: b})
		_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
		wantClass(t, err, fetch.ClassTimeout)
		if !errors.Is(err, fetch.ErrBodyTimeout) {
			t.Errorf("%s: %v, want ErrBodyTimeout", b, err)
		}
	}
	// The worker is free: the next agent on the same fleet proceeds.
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal})
	if _, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()}); err != nil {
		t.Errorf("next fetch: %v", err)
	}
}

// B.18: a server that never sends headers fails at the header timeout.
func TestNoHeadersB18(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	p := loopbackPolicy()
	p.ResponseHeaderTimeout = 100 * time.Millisecond
	p.Timeout = time.Minute
	f := newFetcher(t, fetch.Config{Policy: p})
	_, err := f.Fetch(t.Context(), fetch.Request{URL: srv.URL})
	wantClass(t, err, fetch.ClassTimeout)
	if !errors.Is(err, fetch.ErrHeaderTimeout) {
		t.Errorf("err = %v, want ErrHeaderTimeout", err)
	}
	// The total deadline ends a header wait too, with the same class.
	p.ResponseHeaderTimeout = time.Minute
	p.Timeout = 100 * time.Millisecond
	f = newFetcher(t, fetch.Config{Policy: p})
	_, err = f.Fetch(t.Context(), fetch.Request{URL: srv.URL})
	if !errors.Is(err, fetch.ErrHeaderTimeout) {
		t.Errorf("total deadline while waiting for headers: %v", err)
	}
}

// A caller that cancels (shutdown) gets context.Canceled in the chain, so
// the scheduler does not record the host as failing.
func TestCallerCancel(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.HangAfterHeaders})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		// Cancel once the agent is answering (bounded polling).
		for deadline := time.Now().Add(5 * time.Second); a.InFlight() == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := f.Fetch(ctx, fetch.Request{URL: a.URL()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled in the chain", err)
	}
}
