package fetch_test

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
)

// fakeSigner attaches a signatures member naming kid and jku. The fetcher
// tests only need the bytes and the published key set, not a valid JWS.
func fakeSigner(card []byte, _ crypto.Signer, kid, jku string) ([]byte, error) {
	hdr, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": kid, "jku": jku})
	sig := `,"signatures":[{"protected":"` + base64.RawURLEncoding.EncodeToString(hdr) + `","signature":"AAAA"}]}`
	card = bytes.TrimRight(card, "\n }")
	return append(card, sig...), nil
}

// The verifier's interface, declared here as the verifier declares it.
type keySetFetcher interface {
	FetchKeySet(ctx context.Context, url string) ([]byte, error)
}

func TestFetchKeySet(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Signer: fakeSigner})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	var _ keySetFetcher = f
	body, err := f.FetchKeySet(t.Context(), a.Host().JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct{ Kid string } `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) != 1 || set.Keys[0].Kid != a.KeyID() {
		t.Errorf("key set %s: %v", body, err)
	}
	ks, err := f.KeySetsFor(a.Origin())
	if err != nil {
		t.Fatal(err)
	}
	var _ keySetFetcher = ks
	if _, err := ks.FetchKeySet(t.Context(), a.Host().JWKSURL()); err != nil {
		t.Errorf("on-origin key set: %v", err)
	}
	if a.Host().JWKSRequests() != 2 {
		t.Errorf("JWKS requests = %d, want 2", a.Host().JWKSRequests())
	}
}

// D.43: an off-origin jku is never fetched: not on another fleet host, not
// over http, not at an IP or internal name, not on a non-443 port.
func TestOffOriginJKUNeverFetchedD43(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, BaseAddr: "127.0.0.50", Signer: fakeSigner})
	a := fleet.Add(agentfleet.Agent{Behavior: agentfleet.OffOriginJKU, Host: fleet.Hosts()[0]})
	evil := fleet.Hosts()[1]
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	ks, err := f.KeySetsFor(a.Origin())
	if err != nil {
		t.Fatal(err)
	}
	for _, jku := range []string{evil.JWKSURL(), "https://evil.example/jwks.json", "http://169.254.169.254/jwks.json", "https://agent.example:8443/jwks.json"} {
		_, err := ks.FetchKeySet(t.Context(), jku)
		wantClass(t, err, fetch.ClassBlockedAddress)
		if !errors.Is(err, fetch.ErrOffOrigin) {
			t.Errorf("%s: %v", jku, err)
		}
	}
	if evil.JWKSRequests() != 0 || evil.Requests() != 0 {
		t.Errorf("the off-origin host saw %d requests", evil.Requests())
	}
	// Under the production policy an http or non-443 jku on the right host
	// is refused by the policy itself.
	prod := newFetcher(t, fetch.Config{Policy: fetch.DefaultPolicy(), Resolver: newResolver()})
	for _, jku := range []string{"http://agent.example/.well-known/jwks.json", "https://127.0.0.1/.well-known/jwks.json"} {
		_, err := prod.FetchKeySet(t.Context(), jku)
		wantClass(t, err, fetch.ClassBlockedAddress)
	}
}

// D.44: hostile key sets on the right host — 50 MB, slow, redirecting,
// not JSON — fail with the fetch classes; the redirect target is never
// requested.
func TestHostileKeySetsD44(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{DripInterval: 20 * time.Millisecond})
	h := fleet.Hosts()[0]
	target := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Normal, Path: "/keys/real.json"})
	cases := []struct {
		agent agentfleet.Agent
		class string
		err   error
	}{
		{agentfleet.Agent{Behavior: agentfleet.HugeBody, Size: 50 << 20, Path: "/keys/huge.json"}, fetch.ClassTooLarge, fetch.ErrBodyTooLarge},
		{agentfleet.Agent{Behavior: agentfleet.GzipBomb, Path: "/keys/bomb.json"}, fetch.ClassTooLarge, fetch.ErrBodyTooLarge},
		{agentfleet.Agent{Behavior: agentfleet.SlowDrip, Path: "/keys/slow.json"}, fetch.ClassTimeout, fetch.ErrBodyTimeout},
		{agentfleet.Agent{Behavior: agentfleet.Redirect, Location: "/keys/real.json", Path: "/keys/moved.json"}, fetch.ClassHTTPStatus, fetch.ErrRedirectNotFollowed},
		{agentfleet.Agent{Behavior: agentfleet.HTMLPage, Path: "/keys/page.json"}, fetch.ClassNotJSON, fetch.ErrNotJSON},
		{agentfleet.Agent{Behavior: agentfleet.NotJSON, Path: "/keys/text.json"}, fetch.ClassNotJSON, fetch.ErrNotJSON},
		{agentfleet.Agent{Behavior: agentfleet.Status, Status: http.StatusNotFound, Path: "/keys/gone.json"}, fetch.ClassHTTPStatus, fetch.ErrHTTPStatus},
	}
	p := loopbackPolicy()
	p.Timeout = 300 * time.Millisecond
	f := newFetcher(t, fetch.Config{Policy: p})
	ks, err := f.KeySetsFor(h.Origin())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		a := fleet.Add(c.agent)
		_, err := ks.FetchKeySet(t.Context(), a.URL())
		wantClass(t, err, c.class)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.agent.Behavior, err, c.err)
		}
	}
	if target.Requests() != 0 {
		t.Errorf("redirect target fetched %d times", target.Requests())
	}
}
