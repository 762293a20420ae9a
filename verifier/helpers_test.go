package verifier

import (
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardexhq/cardex/strictjson"
)

const minimalCard = `{"name":"A","description":"d","version":"1","capabilities":{},"skills":[]}`

// withSignatures returns card with its signatures member set to sigs (JSON).
func withSignatures(card, sigs string) string {
	return strings.TrimSuffix(card, "}") + `,"signatures":` + sigs + `}`
}

// signWith signs card's spec canonical form under an arbitrary protected
// header text, the way a hostile or buggy signer could.
func signWith(t testing.TB, card string, signer crypto.Signer, alg, header string) (protected, signature string) {
	t.Helper()
	return signProfile(t, ProfileSpec, card, signer, alg, header)
}

// signProfile signs the canonical bytes of card under profile p.
func signProfile(t testing.TB, p Profile, card string, signer crypto.Signer, alg, header string) (protected, signature string) {
	t.Helper()
	payload, err := Canonicalize(p, parseTree(t, []byte(card)))
	if err != nil {
		t.Fatal(err)
	}
	protected = base64.RawURLEncoding.EncodeToString([]byte(header))
	input := []byte(protected + "." + base64.RawURLEncoding.EncodeToString(payload))
	var sig []byte
	if strings.HasPrefix(alg, "HS") {
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write(input)
		sig = m.Sum(nil)
	} else {
		sig, err = signRaw(signer, alg, input)
		if err != nil {
			t.Fatal(err)
		}
	}
	return protected, base64.RawURLEncoding.EncodeToString(sig)
}

func sigEntry(protected, signature string, extra ...string) string {
	s := `{"protected":"` + protected + `","signature":"` + signature + `"`
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

func verifyString(t testing.TB, v *Verifier, card string, opts VerifyOptions) Verdict {
	t.Helper()
	tree, err := strictjson.Parse([]byte(card))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return v.Verify(t.Context(), tree, opts)
}

// keyHost is an agent origin on loopback serving key sets, counting requests.
type keyHost struct {
	*httptest.Server
	mu       sync.Mutex
	hits     map[string]int
	handlers map[string]http.HandlerFunc
}

func newKeyHost(t testing.TB) *keyHost {
	h := &keyHost{hits: map[string]int{}, handlers: map[string]http.HandlerFunc{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.Path]++
		fn := h.handlers[r.URL.Path]
		h.mu.Unlock()
		if fn == nil {
			http.NotFound(w, r)
			return
		}
		fn(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *keyHost) serve(path string, body []byte) {
	h.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
}

func (h *keyHost) handle(path string, fn http.HandlerFunc) {
	h.mu.Lock()
	h.handlers[path] = fn
	h.mu.Unlock()
}

func (h *keyHost) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

func (h *keyHost) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.hits {
		n += c
	}
	return n
}

// loopbackVerifier fetches over plain HTTP with a short timeout.
func loopbackVerifier(now func() time.Time) *Verifier {
	return New(Config{Fetcher: newLoopbackKeySetFetcher(loopbackFetcherOptions{AllowHTTP: true, Timeout: 500 * time.Millisecond}), Now: now})
}
