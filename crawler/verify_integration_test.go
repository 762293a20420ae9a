package crawler_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/strictjson"
	"github.com/cardexhq/cardex/verifier"
)

// verifierSigner plugs the verifier's Sign into the fleet.
func verifierSigner(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	return verifier.Sign(card, key, verifier.SignOptions{Kid: kid, Jku: jku})
}

// The fetcher is the verifier's key-set source: signed fleet agents verify
// through it, a tampered card does not, and an off-origin jku is never
// fetched (docs/threats.md D.43).
func TestFleetCardsVerifyThroughFetcher(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, BaseAddr: "127.0.0.100", Signer: verifierSigner})
	home, evil := fleet.Hosts()[0], fleet.Hosts()[1]
	signed := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: home})
	tampered := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Tampered, Host: home})
	off := fleet.Add(agentfleet.Agent{Behavior: agentfleet.OffOriginJKU, Host: home})
	// An agent with its own Ed25519 key, published beside the host's key
	// (before anything is verified: the verifier caches key sets).
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	eddsa := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: home, Key: edKey})
	f := newFetcher(t, fetch.Config{Policy: loopbackPolicy()})
	v := verifier.New(verifier.Config{Fetcher: f})
	verdict := func(a *agentfleet.AgentHandle) verifier.Verdict {
		resp, err := f.Fetch(t.Context(), cardRequest(a.URL()))
		if err != nil {
			t.Fatal(err)
		}
		tree, err := strictjson.Parse(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return v.Verify(t.Context(), tree, verifier.VerifyOptions{Origin: a.Origin()})
	}
	if got := verdict(signed); !got.Verified() {
		t.Errorf("signed agent: %+v", got)
	}
	if got := verdict(eddsa); !got.Verified() || len(got.Signatures) != 1 || got.Signatures[0].Alg != "EdDSA" {
		t.Errorf("EdDSA agent: %+v", got)
	}
	if got := verdict(tampered); got.Verified() || got.Status != verifier.StatusInvalid {
		t.Errorf("tampered agent: %+v", got)
	}
	if got := verdict(off); got.Verified() {
		t.Errorf("off-origin jku agent verified: %+v", got)
	}
	if evil.JWKSRequests() != 0 || evil.Requests() != 0 {
		t.Errorf("the off-origin key set was fetched %d times", evil.JWKSRequests())
	}
}
