package crawler_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// docs/threats.md D.43: a jku on another host is never fetched (the fleet
// host that publishes the key sees no request at all) and the signature is
// untrusted.
func TestCrawlOffOriginJKUNeverFetched(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, Signer: verifierSigner})
		home, keyHost := fleet.Hosts()[0], fleet.Hosts()[1]
		off := fleet.Add(agentfleet.Agent{Behavior: agentfleet.OffOriginJKU, Host: home})
		// A signed neighbour gives the home host a well-known key set
		// without the off-origin key: the only source the signature names
		// is the untrusted jku. (A missing well-known set would make it
		// "error": a trusted source could not be fetched, docs/verification.md.)
		fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: home})
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, off.URL())
		st.crawl(t, 1)
		if keyHost.Requests() != 0 {
			t.Errorf("the off-origin key host received %d requests (%d for its key set)", keyHost.Requests(), keyHost.JWKSRequests())
		}
		a := st.get(t, id)
		if a.Trust != registry.TrustUntrusted || len(a.Signatures) != 1 || a.Signatures[0].Status != "untrusted" {
			t.Errorf("trust %s signatures %+v, want untrusted", a.Trust, a.Signatures)
		}
	})
}

// docs/threats.md D.44: a hostile key set on the agent's own origin makes
// the signature "error" (unverifiable), never "invalid": the card may verify
// once the key set is repaired.
func TestCrawlHostileJWKSIsError(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k := newSigningKey(t)
		good := string(jwks(t, k))
		key, err := json.Marshal(k.jwk)
		if err != nil {
			t.Fatal(err)
		}
		hostile := map[string][]byte{
			"keys not an array": []byte(`{"keys":"x"}`),
			"not JSON":          []byte(`<html>keys</html>`),
			"private key":       []byte(strings.Replace(good, `"kty"`, `"d":"AAAA","kty"`, 1)),
			"symmetric key":     []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"` + k.jwk.KeyID + `"}]}`),
			"over 64 KiB":       []byte(`{"keys":[],"pad":"` + strings.Repeat("a", 70<<10) + `"}`),
			"duplicate kid":     []byte(`{"keys":[` + string(key) + `,` + string(key) + `]}`),
		}
		st := newStack(t, store, stackOptions{})
		for name, set := range hostile {
			m := newMutableAgent(t)
			m.card(k.sign(t, agentfleet.GenerateCard(1, m.Origin(), "1.0.0"), m.Origin()+"/.well-known/jwks.json"))
			m.setJWKS(set)
			id := st.submit(t, m.URL())
			st.crawl(t, 1)
			a := st.get(t, id)
			if a.Trust != registry.TrustError || len(a.Signatures) != 1 || a.Signatures[0].Status != "error" {
				t.Errorf("%s: trust %s signatures %+v, want error", name, a.Trust, a.Signatures)
			}
			if m.keys.Load() != 1 {
				t.Errorf("%s: key set fetched %d times, want 1", name, m.keys.Load())
			}
		}
	})
}

// docs/threats.md D.49: a verified agent whose card arrives unsigned, or
// signed by a key never seen verified, keeps its verified version current;
// the new one is a candidate and the agent needs review.
func TestCrawlSignatureStrippingKeepsVerified(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k, other := newSigningKey(t), newSigningKey(t)
		m := newMutableAgent(t)
		jku := m.Origin() + "/.well-known/jwks.json"
		m.setJWKS(jwks(t, k))
		m.card(k.sign(t, agentfleet.GenerateCard(1, m.Origin(), "1.0.0"), jku))
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		if a := st.get(t, id); a.Trust != registry.TrustVerified || a.VersionSeq != 1 {
			t.Fatalf("first crawl: trust %s version %d", a.Trust, a.VersionSeq)
		}
		for i, served := range [][]byte{
			agentfleet.GenerateCard(1, m.Origin(), "1.1.0"),                     // stripped
			other.sign(t, agentfleet.GenerateCard(1, m.Origin(), "1.2.0"), jku), // an unknown key
		} {
			m.card(served)
			st.later(t, 25*time.Hour, 1)
			a := st.get(t, id)
			if a.Trust != registry.TrustVerified || a.VersionSeq != 1 || !a.NeedsReview {
				t.Errorf("downgrade %d: trust %s current version %d needsReview %v", i, a.Trust, a.VersionSeq, a.NeedsReview)
			}
			v := st.versions(t, id)
			if len(v) != i+2 || !v[0].Candidate || v[0].Current || !v[len(v)-1].Current {
				t.Errorf("downgrade %d: versions %+v", i, v)
			}
		}
	})
}

// docs/threats.md D.50: the exact signed card of agent A, with A's jku,
// served by agent B is not verified for B, and B's crawl does not fetch
// A's key set.
func TestCrawlCrossDomainReplay(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k := newSigningKey(t)
		victim, attacker := newMutableAgent(t), newMutableAgent(t)
		victim.setJWKS(jwks(t, k))
		signed := k.sign(t, agentfleet.GenerateCard(1, victim.Origin(), "1.0.0"), victim.Origin()+"/.well-known/jwks.json")
		victim.card(signed)
		attacker.card(signed)
		attacker.setJWKS([]byte(`{"keys":[]}`))
		st := newStack(t, store, stackOptions{})
		victimID := st.submit(t, victim.URL())
		st.crawl(t, 1)
		attackerID := st.submit(t, attacker.URL())
		st.crawl(t, 1)
		if a := st.get(t, victimID); a.Trust != registry.TrustVerified {
			t.Errorf("victim: trust %s", a.Trust)
		}
		a := st.get(t, attackerID)
		if a.Trust != registry.TrustUntrusted || a.Signatures[0].Status != "untrusted" {
			t.Errorf("replayed card for the attacker: trust %s %+v, want untrusted", a.Trust, a.Signatures)
		}
		if victim.keys.Load() != 1 {
			t.Errorf("victim key set fetched %d times, want once (by the victim's own crawl)", victim.keys.Load())
		}
	})
}

// docs/threats.md D.51: of many signatures at most 8 are examined and at most
// 2 distinct key sets fetched per crawl; one trusted signature verifies the
// card and every signature has its stored result.
func TestCrawlManySignaturesCapped(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k := newSigningKey(t)
		m := newMutableAgent(t)
		m.setJWKS(jwks(t, k))
		card := agentfleet.GenerateCard(1, m.Origin(), "1.0.0")
		for i := range 20 {
			card = k.sign(t, card, fmt.Sprintf("%s/.well-known/jwks.json?n=%d", m.Origin(), i))
		}
		m.card(card)
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		a := st.get(t, id)
		if a.Trust != registry.TrustVerified || len(a.Signatures) != 20 {
			t.Fatalf("trust %s, %d signature results; want verified and 20", a.Trust, len(a.Signatures))
		}
		for _, s := range a.Signatures[8:] {
			if s.Status != "invalid" || !strings.Contains(s.Reason, "D.51") {
				t.Errorf("signature %d beyond the cap: %+v", s.Index, s)
			}
		}
		if n := m.keys.Load(); n > 2 {
			t.Errorf("%d key set fetches for one card, want at most 2", n)
		}
	})
}
