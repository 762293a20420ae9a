package crawler_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
)

// conditionalCard serves body with an ETag, and 304 to a request that
// presents it (a publisher's static file server).
func conditionalCard(body []byte) func(w http.ResponseWriter, r *http.Request) {
	const etag = `"v1"`
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}
}

// trustChanges counts the agent's `trust` change-log rows after seq after.
func trustChanges(t *testing.T, st *stack, id string, after int64) (int, int64) {
	t.Helper()
	cs, next, err := st.svc.Changes(t.Context(), admin, after, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cs {
		if c.AgentID == id && c.Kind == registry.ChangeTrust {
			n++
		}
	}
	return n, next
}

// wantSameBytes checks that a re-verification changed the verdict of the one
// stored version and nothing else: no new version, no candidate, no review
// flag (the same bytes are not a new candidate; registry.RecordFetches).
func wantSameBytes(t *testing.T, st *stack, id string, trust registry.Trust, result string) {
	t.Helper()
	a := st.get(t, id)
	vs := st.versions(t, id)
	if a.Trust != trust || a.VersionSeq != 1 || a.NeedsReview || len(vs) != 1 || vs[0].Trust != trust || !vs[0].Current {
		t.Fatalf("agent trust %s version %d needsReview %v; versions %+v; want trust %s on the one version",
			a.Trust, a.VersionSeq, a.NeedsReview, vs, trust)
	}
	if f := st.lastFetch(t, id); f.Result != result {
		t.Fatalf("last fetch %+v, want %s", f, result)
	}
}

// serveModes are the two ways a publisher answers for a card that did not
// change: 304 to the stored validators (the crawler re-verifies the stored
// bytes, DueAgent.Latest), or the same bytes again with 200.
var serveModes = map[string]func(m *mutableAgent, body []byte){
	"304":           func(m *mutableAgent, body []byte) { m.set(conditionalCard(body)) },
	"unchanged 200": func(m *mutableAgent, body []byte) { m.card(body) },
}

// docs/threats.md D.52 end to end: the key leaves the agent's key set while
// the card bytes stay the same. Within the key cache TTL (injected clock)
// the cached key still verifies; on the first crawl after it the stored
// trust becomes error (unverifiable) and a `trust` change is logged.
func TestCrawlRevokedKeyOnUnchangedCard(t *testing.T) {
	for mode, serve := range serveModes {
		t.Run(mode, func(t *testing.T) {
			registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
				k := newSigningKey(t)
				m := newMutableAgent(t)
				m.setJWKS(jwks(t, k))
				serve(m, k.sign(t, agentfleet.GenerateCard(3, m.Origin(), "1.0.0"), m.Origin()+"/.well-known/jwks.json"))
				st := newStack(t, store, stackOptions{cacheTTL: 3 * time.Hour})
				id := st.submit(t, m.URL())
				st.crawl(t, 1)
				wantSameBytes(t, st, id, registry.TrustVerified, registry.ResultNewVersion)
				_, mark := trustChanges(t, st, id, 0)

				m.setJWKS(jwks(t)) // the publisher revokes the key
				st.later(t, 2*time.Hour, 1)
				wantSameBytes(t, st, id, registry.TrustVerified, registry.ResultUnchanged)
				if m.keys.Load() != 1 {
					t.Fatalf("key set fetched %d times within its cache TTL", m.keys.Load())
				}
				st.later(t, 2*time.Hour, 1)
				wantSameBytes(t, st, id, registry.TrustError, registry.ResultUnchanged)
				if n, _ := trustChanges(t, st, id, mark); n != 1 {
					t.Fatalf("%d trust changes logged, want 1", n)
				}
				if m.keys.Load() != 2 {
					t.Fatalf("key set fetched %d times, want a fresh fetch after the TTL", m.keys.Load())
				}
				if mode == "304" && m.reqs.Load() != 3 {
					t.Fatalf("%d card requests", m.reqs.Load())
				}
			})
		})
	}
}

// docs/threats.md D.44 recovery: a key set that failed on the first crawl
// (stored as error) answers later; the next crawl of the unchanged card
// makes it verified, with a `trust` change, and adds its key to the keys
// that ever verified the agent (so a later new version signed by it is not
// a regression).
func TestCrawlKeySetRecoveryOnUnchangedCard(t *testing.T) {
	for mode, serve := range serveModes {
		t.Run(mode, func(t *testing.T) {
			registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
				k := newSigningKey(t)
				m := newMutableAgent(t) // no key set yet: 404
				card := k.sign(t, agentfleet.GenerateCard(4, m.Origin(), "1.0.0"), m.Origin()+"/.well-known/jwks.json")
				serve(m, card)
				st := newStack(t, store, stackOptions{})
				id := st.submit(t, m.URL())
				st.crawl(t, 1)
				wantSameBytes(t, st, id, registry.TrustError, registry.ResultNewVersion)
				_, mark := trustChanges(t, st, id, 0)

				m.setJWKS(jwks(t, k))
				st.later(t, 2*time.Hour, 1)
				wantSameBytes(t, st, id, registry.TrustVerified, registry.ResultUnchanged)
				if n, _ := trustChanges(t, st, id, mark); n != 1 {
					t.Fatalf("%d trust changes logged, want 1", n)
				}
				// A new version signed by the same key is no regression.
				m.set(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.Write(k.sign(t, agentfleet.GenerateCard(4, m.Origin(), "1.1.0"), m.Origin()+"/.well-known/jwks.json"))
				})
				st.later(t, 2*time.Hour, 1)
				if a := st.get(t, id); a.VersionSeq != 2 || a.NeedsReview || a.Trust != registry.TrustVerified {
					t.Fatalf("new version after recovery: version %d needsReview %v trust %s", a.VersionSeq, a.NeedsReview, a.Trust)
				}
			})
		})
	}
}
