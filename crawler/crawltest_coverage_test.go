package crawler_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/registry/registrytest"
	"github.com/cardexhq/cardex/strictjson"
	"github.com/cardexhq/cardex/verifier"
)

// hybridV1 is the v1 part of a hybrid card served at origin: a 1.0 and a
// 0.3 JSON-RPC interface.
func hybridV1(origin string) []byte {
	return []byte(`{"name":"Hybrid Agent","description":"Serves v1 and v0.3 clients","version":"1.0.0",` +
		`"supportedInterfaces":[{"url":"` + origin + `/a2a/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"},` +
		`{"url":"` + origin + `/a2a/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],` +
		`"provider":{"organization":"Example","url":"https://example.com"},"capabilities":{"streaming":true},` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"s","name":"Skill","description":"Does things","tags":["t"]}]}`)
}

// withMembers adds top-level members to a signed card after signing.
func withMembers(card []byte, members string) []byte {
	c := bytes.TrimSuffix(bytes.TrimSpace(card), []byte("}"))
	return append(append(c, ","+members...), '}')
}

// A signature vouches only for the members it covers (docs/verification.md).
// A verified hybrid agent whose hosted file is edited by someone without
// the key — unsigned url, preferredTransport, additionalInterfaces and
// provider members pointing elsewhere beside the valid v1 signature — stays
// verified, and the edit reaches no one: the card Cardex stores, shows and
// probes is the signed projection, the unsigned members are listed as not
// covered, and v0.3 clients get a v0.3 form written from the signed members.
func TestCrawlUnsignedMembersBesideAValidSignature(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k := newSigningKey(t)
		m := newMutableAgent(t)
		m.setJWKS(jwks(t, k))
		signed := k.sign(t, hybridV1(m.Origin()), m.Origin()+"/.well-known/jwks.json")
		// The legitimate hybrid: the v0.3 rendering restates the signed
		// 0.3 interface, as the SDKs serve it.
		legit := withMembers(signed, `"url":"`+m.Origin()+`/a2a/v03","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"`)
		m.card(legit)
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		seq := int64(1)
		if _, err := st.svc.Act(t.Context(), admin, id, registry.ActionApprove, registry.ActionRequest{VersionSeq: &seq}); err != nil {
			t.Fatal(err)
		}
		a := st.get(t, id)
		if a.Trust != registry.TrustVerified || a.VersionSeq != 1 || a.NeedsReview || a.Card.Shape != "hybrid" {
			t.Fatalf("legitimate hybrid: trust %s version %d needsReview %v shape %s", a.Trust, a.VersionSeq, a.NeedsReview, a.Card.Shape)
		}
		if s := a.Signatures[0]; s.Profile != "spec-v1-only" || !slices.Equal(s.Unsigned, []string{"/url", "/preferredTransport", "/protocolVersion"}) {
			t.Fatalf("legitimate hybrid signature %+v", s)
		}
		// Its own v0.3 members agree: v0.3 clients get its bytes.
		if raw, _, _, err := st.svc.CardRendering(t.Context(), admin, id, true); err != nil || !bytes.Equal(raw, legit) {
			t.Fatalf("legitimate hybrid, v0.3 rendering %s %v", raw, err)
		}
		pinned := verifier.VerifyOptions{Pinned: jwks(t, k)}
		signedInterfaces := []string{m.Origin() + "/a2a/v1", m.Origin() + "/a2a/v03"}

		m.card(withMembers(signed, `"url":"http://127.0.0.1:1/steal","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",`+
			`"additionalInterfaces":[{"url":"http://127.0.0.1:1/rest","transport":"HTTP+JSON"}]`))
		st.later(t, 25*time.Hour, 1)
		a = st.get(t, id)
		if a.Trust != registry.TrustVerified || a.VersionSeq != 2 || a.NeedsReview || a.Status != registry.StatusApproved {
			t.Fatalf("injected: trust %s current version %d needsReview %v status %s", a.Trust, a.VersionSeq, a.NeedsReview, a.Status)
		}
		if got := interfaceURLs(a); !slices.Equal(got, signedInterfaces) {
			t.Fatalf("the card shows unsigned endpoints: %q", got)
		}
		want := []string{"/url", "/preferredTransport", "/protocolVersion", "/additionalInterfaces"}
		if s := a.Signatures[0]; s.Status != "verified" || s.Profile != "spec-v1-only" || !slices.Equal(s.Unsigned, want) ||
			!strings.Contains(s.Reason, "4 member(s) not covered by the signature, ignored") {
			t.Fatalf("signature %+v", s)
		}
		// v0.3 clients of /card get the v0.3 form of the signed members,
		// which still verifies.
		raw, _, legacy, err := st.svc.CardRendering(t.Context(), admin, id, true)
		if err != nil || !legacy || bytes.Contains(raw, []byte("127.0.0.1:1")) ||
			!bytes.Contains(raw, []byte(`"url":"`+m.Origin()+`/a2a/v03","preferredTransport":"JSONRPC","protocolVersion":"0.3"`)) {
			t.Fatalf("v0.3 rendering (legacy %v, %v): %s", legacy, err, raw)
		}
		if v := verifyBytes(t, raw, pinned); v.Status != verifier.StatusVerified || v.LegacyDisagrees {
			t.Fatalf("the derived v0.3 rendering: %+v", v)
		}

		// The same edit on the provider: v0.3 readers take provider.name
		// only without an organization; Cardex shows the signed one.
		m.card(bytes.Replace(signed, []byte(`"organization":"Example",`), []byte(`"organization":"Example","name":"Evil Corp",`), 1))
		st.later(t, 25*time.Hour, 1)
		a = st.get(t, id)
		if a.VersionSeq != 3 || a.NeedsReview || a.Trust != registry.TrustVerified || a.Card.Provider == nil ||
			a.Card.Provider.Organization != "Example" || !slices.Equal(a.Signatures[0].Unsigned, []string{"/provider/name"}) {
			t.Fatalf("provider.name: current %d needsReview %v %+v %+v", a.VersionSeq, a.NeedsReview, a.Card.Provider, a.Signatures)
		}
		if raw, _, legacy, _ := st.svc.CardRendering(t.Context(), admin, id, true); !legacy || bytes.Contains(raw, []byte("Evil Corp")) {
			t.Fatalf("provider.name reaches v0.3 clients: %s", raw)
		}
	})
}

func interfaceURLs(a *registry.Agent) []string {
	var out []string
	for _, it := range a.Card.Interfaces {
		out = append(out, it.URL)
	}
	return out
}

func verifyBytes(t *testing.T, raw []byte, opts verifier.VerifyOptions) verifier.Verdict {
	t.Helper()
	tree, err := strictjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return verifier.New(verifier.Config{}).Verify(t.Context(), tree, opts)
}

// An agent that signs its card on every request (the a2a-js SDK does, with
// a fresh ECDSA signature each time) serves new bytes on every crawl. The
// content and the verifying key are the same, so it is one version: seven
// crawls make no second version, no change row and no index work.
func TestCrawlAgentThatResignsOnEveryRequest(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k := newSigningKey(t)
		m := newMutableAgent(t)
		m.setJWKS(jwks(t, k))
		card := hybridV1(m.Origin())
		var (
			mu     sync.Mutex
			served [][]byte
		)
		m.set(func(w http.ResponseWriter, _ *http.Request) {
			// verifier.Sign, not k.sign: this runs on the server's goroutine.
			b, err := verifier.Sign(card, k.priv, verifier.SignOptions{Kid: k.jwk.KeyID, Jku: m.Origin() + "/.well-known/jwks.json"})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			mu.Lock()
			served = append(served, b)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
		})
		st := newStack(t, store, stackOptions{})
		id := st.submit(t, m.URL())
		st.crawl(t, 1)
		_, mark, err := st.svc.Changes(t.Context(), admin, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for range 6 {
			st.later(t, 25*time.Hour, 1)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(served) != 7 || bytes.Equal(served[0], served[1]) {
			t.Fatalf("%d cards served; the first two equal: %v", len(served), bytes.Equal(served[0], served[1]))
		}
		a := st.get(t, id)
		if v := st.versions(t, id); a.VersionSeq != 1 || len(v) != 1 || a.Trust != registry.TrustVerified {
			t.Fatalf("version %d of %d, trust %s", a.VersionSeq, len(v), a.Trust)
		}
		after, _, err := st.svc.Changes(t.Context(), admin, mark, 1000)
		if err != nil || len(after) != 0 {
			t.Fatalf("change rows after the first crawl: %+v %v", after, err)
		}
		if f := st.lastFetch(t, id); f.Result != registry.ResultUnchanged || f.HTTPStatus != 200 {
			t.Fatalf("last fetch %+v", f)
		}
	})
}

// An agent that renders its card per A2A-Version (Vary: A2A-Version) has
// its v0.3 rendering fetched too and kept with the version when the
// verifier judges it as it judged the v1 rendering; a v0.3 rendering whose
// unsigned members point elsewhere is not kept, so v0.3 clients are given
// the v1 bytes instead.
func TestCrawlKeepsTheV03RenderingOfAVaryingAgent(t *testing.T) {
	registrytest.EachStore(t, func(t *testing.T, store *registry.Store) {
		k := newSigningKey(t)
		st := newStack(t, store, stackOptions{})
		for _, c := range []struct {
			name, legacyURL string
			kept            bool
		}{{"agreeing", "/a2a/v03", true}, {"pointing elsewhere", "/steal", false}} {
			m := newMutableAgent(t)
			m.setJWKS(jwks(t, k))
			v1 := k.sign(t, hybridV1(m.Origin()), m.Origin()+"/.well-known/jwks.json")
			v03 := withMembers(v1, `"url":"`+m.Origin()+c.legacyURL+`","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"`)
			var v03Requests atomic.Int64
			m.set(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Vary", "Accept, A2A-Version")
				if r.Header.Get("A2A-Version") == "1.0" {
					w.Write(v1)
					return
				}
				v03Requests.Add(1)
				w.Write(v03)
			})
			id := st.submit(t, m.URL())
			st.crawl(t, 1)
			if a := st.get(t, id); a.Trust != registry.TrustVerified || a.VersionSeq != 1 {
				t.Fatalf("%s: trust %s version %d", c.name, a.Trust, a.VersionSeq)
			}
			raw, _, legacy, err := st.svc.CardRendering(t.Context(), admin, id, true)
			if err != nil || v03Requests.Load() != 1 || legacy != c.kept {
				t.Fatalf("%s: legacy %v after %d v0.3 requests: %v", c.name, legacy, v03Requests.Load(), err)
			}
			want := v1
			if c.kept {
				want = v03
			}
			if !bytes.Equal(raw, want) {
				t.Fatalf("%s: v0.3 clients get %s", c.name, raw)
			}
			if raw, _, _, _ := st.svc.CardRendering(t.Context(), admin, id, false); !bytes.Equal(raw, v1) {
				t.Fatalf("%s: v1 clients get %s", c.name, raw)
			}
		}
	})
}
