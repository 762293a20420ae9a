package verifier

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is an injected clock for the key set cache.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// D.52: a key removed from the published set keeps verifying only until the
// cache TTL (10 min) passes; then the signature is `error`, not verified.
func TestKeyRemovalHonouredAfterCacheTTL(t *testing.T) {
	host := newKeyHost(t)
	k := mustKey(t, "P-256")
	host.serve("/.well-known/jwks.json", publicJWKS(t, k, "k", ""))
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	v := loopbackVerifier(clock.Now)
	p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k"}`)
	card := withSignatures(minimalCard, "["+sigEntry(p, s)+"]")
	opts := VerifyOptions{Origin: host.URL}

	if got := verifyString(t, v, card, opts); got.Status != StatusVerified {
		t.Fatalf("%+v", got)
	}
	host.serve("/.well-known/jwks.json", []byte(`{"keys":[]}`)) // key revoked
	clock.Advance(9*time.Minute + 59*time.Second)
	if got := verifyString(t, v, card, opts); got.Status != StatusVerified || host.total() != 1 {
		t.Fatalf("within TTL: %+v, requests %d", got, host.total())
	}
	clock.Advance(time.Second)
	got := verifyString(t, v, card, opts)
	if got.Status != StatusError || host.total() != 2 || !strings.Contains(got.Signatures[0].Reason, `no key "k"`) {
		t.Fatalf("after TTL: %+v, requests %d", got, host.total())
	}
}

// A failed fetch is remembered for about a minute, then retried.
func TestFailuresCachedBriefly(t *testing.T) {
	host := newKeyHost(t)
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	v := loopbackVerifier(clock.Now)
	k := mustKey(t, "P-256")
	p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k"}`)
	card := withSignatures(minimalCard, "["+sigEntry(p, s)+"]")
	opts := VerifyOptions{Origin: host.URL}
	if got := verifyString(t, v, card, opts); got.Status != StatusError || !strings.Contains(got.Signatures[0].Reason, "404") {
		t.Fatalf("%+v", got)
	}
	host.serve("/.well-known/jwks.json", publicJWKS(t, k, "k", ""))
	clock.Advance(59 * time.Second)
	if got := verifyString(t, v, card, opts); got.Status != StatusError || host.total() != 1 {
		t.Fatalf("failure not cached: %+v, requests %d", got, host.total())
	}
	clock.Advance(time.Second)
	if got := verifyString(t, v, card, opts); got.Status != StatusVerified || host.total() != 2 {
		t.Fatalf("not retried: %+v, requests %d", got, host.total())
	}
}

// blockingFetcher counts fetches and blocks until released.
type blockingFetcher struct {
	calls   atomic.Int32
	release chan struct{}
	body    []byte
}

func (f *blockingFetcher) FetchKeySet(ctx context.Context, _ string) ([]byte, error) {
	f.calls.Add(1)
	select {
	case <-f.release:
		return f.body, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Concurrent verifications of one origin share a single fetch; a caller
// that gives up does not poison the cache.
func TestCacheSharesFetchesAndIgnoresCancellation(t *testing.T) {
	k := mustKey(t, "P-256")
	f := &blockingFetcher{release: make(chan struct{}), body: publicJWKS(t, k, "k", "")}
	v := New(Config{Fetcher: f})
	p, s := signWith(t, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k"}`)
	tree := parseTree(t, []byte(withSignatures(minimalCard, "["+sigEntry(p, s)+"]")))
	opts := VerifyOptions{Origin: "https://agent.example"}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got := v.Verify(ctx, tree, opts); got.Status != StatusError || !strings.Contains(got.Signatures[0].Reason, "canceled") {
		t.Fatalf("cancelled: %+v", got)
	}
	var wg sync.WaitGroup
	results := make([]Verdict, 8)
	for i := range results {
		wg.Go(func() { results[i] = v.Verify(t.Context(), tree, opts) })
	}
	// Wait (bounded) until the one shared fetch is in flight.
	deadline := time.Now().Add(5 * time.Second)
	for f.calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(f.release)
	wg.Wait()
	for i, r := range results {
		if r.Status != StatusVerified {
			t.Fatalf("verification %d: %+v", i, r)
		}
	}
	if n := f.calls.Load(); n != 2 { // the cancelled attempt and one shared fetch
		t.Fatalf("fetches = %d, want 2", n)
	}
}

// Pinned sets are parsed once per content; the memo is bounded.
func TestPinnedSetsMemo(t *testing.T) {
	var p pinnedSets
	raw := es256JWKS(t)
	a, err := p.get(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := p.get(append([]byte(nil), raw...)); b != a {
		t.Fatal("same bytes parsed twice")
	}
	if _, err := p.get([]byte(`{"keys":[{"kty":"oct","k":"AA"}]}`)); !errors.Is(err, ErrKeySetPrivate) {
		t.Fatalf("err=%v", err)
	}
	for i := range maxPinnedSets + 10 {
		p.get([]byte(`{"keys":[],"n":` + strconv.Itoa(i) + `}`))
	}
	if len(p.sets) > maxPinnedSets {
		t.Fatalf("%d sets kept", len(p.sets))
	}
}
