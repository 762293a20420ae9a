package fetch_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

func TestFetchSendsProtocolHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"x"}`))
	}))
	defer srv.Close()
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	resp, err := f.Fetch(t.Context(), fetch.Request{URL: srv.URL + "/card", ETag: `W/"abc"`, LastModified: "Sun, 22 Nov 2026 05:00:00 GMT"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Accept":            "application/json",
		"A2a-Version":       "1.0",
		"User-Agent":        fetch.DefaultPolicy().UserAgent,
		"If-None-Match":     `W/"abc"`,
		"If-Modified-Since": "Sun, 22 Nov 2026 05:00:00 GMT",
		"Accept-Encoding":   "gzip", // transparent decompression, B.21
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}
	if resp.StatusCode != 200 || string(resp.Body) != `{"name":"x"}` || resp.URL != srv.URL+"/card" || resp.NotModified {
		t.Errorf("response = %+v", resp)
	}
	if resp.Bytes < int64(len(resp.Body)) || resp.Duration <= 0 {
		t.Errorf("Bytes %d, Duration %v", resp.Bytes, resp.Duration)
	}
}

func TestFetchServedCardExactly(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2})
	for _, name := range agentfleet.SampleCardNames() {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Card: agentfleet.SampleCards()[name]})
		f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
		resp, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL(), FollowRedirects: true, SameOriginOnly: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(resp.Body, agentfleet.SampleCards()[name]) {
			t.Errorf("%s: body differs from the served bytes", name)
		}
		if err := resp.CheckJSON(); err != nil {
			t.Errorf("%s: CheckJSON: %v", name, err)
		}
	}
}

// B.26 / A2A §8.6: conditional requests answer 304; the body is not resent.
func TestConditionalFetch304(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Conditional})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	first, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
	if err != nil {
		t.Fatal(err)
	}
	etag, lm := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
	if etag == "" || lm == "" {
		t.Fatalf("no validators: %v", first.Header)
	}
	if d, ok := fetch.MaxAge(first.Header); !ok || d != time.Hour {
		t.Errorf("MaxAge = %v %v, want 1h", d, ok)
	}
	for _, req := range []fetch.Request{{URL: a.URL(), ETag: etag}, {URL: a.URL(), LastModified: lm}} {
		resp, err := f.Fetch(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.NotModified || resp.StatusCode != http.StatusNotModified || resp.Body != nil {
			t.Errorf("%+v: got status %d, NotModified %v, %d body bytes", req, resp.StatusCode, resp.NotModified, len(resp.Body))
		}
	}
	resp, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL(), ETag: `W/"stale"`})
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(resp.Body, a.Card()) {
		t.Errorf("a stale ETag: %v, %+v", err, resp)
	}
	if a.Requests() != 4 {
		t.Errorf("requests = %d, want 4", a.Requests())
	}
}

func TestChangingCardNewVersionEveryN(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Changing, ChangeEvery: 2})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	var etag string
	var statuses []int
	for range 6 {
		resp, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL(), ETag: etag})
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, resp.StatusCode)
		etag = resp.Header.Get("ETag")
	}
	// Requests 1-2 are version 0, 3-4 version 1, 5-6 version 2.
	want := []int{200, 304, 200, 304, 200, 304}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("statuses = %v, want %v", statuses, want)
		}
	}
	if !bytes.Contains(a.Card(), []byte(`"version":"1.2.0"`)) {
		t.Errorf("card after 6 requests: %s", a.Card())
	}
}

// B.26: status classes, with Retry-After exposed for the scheduler.
func TestHTTPStatusB26(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	now := time.Now()
	cases := []struct {
		status     int
		retryAfter string
		wantDelay  time.Duration
	}{
		{404, "", 0}, {410, "", 0}, {500, "", 0}, {502, "", 0},
		{429, "120", 120 * time.Second},
		{503, now.Add(90 * time.Second).UTC().Format(http.TimeFormat), 89 * time.Second},
	}
	for _, c := range cases {
		a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Status, Status: c.status, RetryAfter: c.retryAfter})
		_, err := f.Fetch(t.Context(), fetch.Request{URL: a.URL()})
		fe := wantClass(t, err, fetch.ClassHTTPStatus)
		if fe.HTTPStatus != c.status || !errors.Is(err, fetch.ErrHTTPStatus) || fe.Hop != a.URL() {
			t.Errorf("%d: %+v", c.status, fe)
		}
		d, ok := fetch.RetryAfter(fe.Header, now)
		if ok != (c.retryAfter != "") || (ok && (d < c.wantDelay || d > c.wantDelay+2*time.Second)) {
			t.Errorf("%d: RetryAfter = %v %v, want about %v", c.status, d, ok, c.wantDelay)
		}
	}
}

func TestOriginHelpers(t *testing.T) {
	cases := map[string]string{
		"https://Agent.Example.:443/x?y": "https://agent.example",
		"http://127.0.0.1:80/":           "http://127.0.0.1",
		"http://127.0.0.1:8080/a":        "http://127.0.0.1:8080",
		"https://[::1]:8443/":            "https://[::1]:8443",
		"HTTPS://[::1]/":                 "https://[::1]",
	}
	for in, want := range cases {
		got, err := fetch.OriginOf(in)
		if err != nil || got != want {
			t.Errorf("OriginOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := fetch.OriginOf("/relative"); err == nil || !strings.Contains(err.Error(), "no host") {
		t.Errorf("relative URL: %v", err)
	}
}
