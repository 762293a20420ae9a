package api

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// GET /card serves the bytes RecordFetch stored, byte for byte, with a
// strong ETag of their SHA-256; If-None-Match answers 304.
func TestCardBytesAndETag(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		a := h.submit("https://card.example.com/", "")
		path := "/api/v1/agents/" + a.ID + "/card"
		h.do(req{method: "GET", path: path}).expectProblem(t, http.StatusNotFound, "not-found")

		raw := h.cardBytes(cardV1)
		h.fetch(a.ID, raw)
		r := h.do(req{method: "GET", path: path})
		r.expectStatus(t, http.StatusOK)
		sum := sha256.Sum256(raw)
		etag := `"` + hex.EncodeToString(sum[:]) + `"`
		if !bytes.Equal(r.body, raw) || r.header.Get("ETag") != etag || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("ETag %q Content-Type %q, %d bytes (want %d)", r.header.Get("ETag"), r.header.Get("Content-Type"), len(r.body), len(raw))
		}
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
			nm := h.do(req{method: "GET", path: path, header: []string{"If-None-Match", inm}})
			if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != etag {
				t.Fatalf("If-None-Match %s: status %d, %d bytes", inm, nm.status, len(nm.body))
			}
		}
		h.do(req{method: "GET", path: path, header: []string{"If-None-Match", `"stale"`}}).expectStatus(t, http.StatusOK)

		// A new version changes the bytes and the tag.
		raw2 := h.cardBytes(cardCurrency)
		h.fetch(a.ID, raw2)
		r = h.do(req{method: "GET", path: path, header: []string{"If-None-Match", etag}})
		r.expectStatus(t, http.StatusOK)
		if !bytes.Equal(r.body, raw2) {
			t.Fatal("second version bytes differ")
		}
	})
}

func TestVersions(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		a := h.submit("https://versions.example.com/", "")
		base := "/api/v1/agents/" + a.ID
		r := h.do(req{method: "GET", path: base + "/versions"})
		r.expectStatus(t, http.StatusOK)
		if string(r.body) != `{"versions":[]}` {
			t.Fatalf("no versions yet: %s", r.body)
		}
		raw1, raw2 := h.cardBytes(cardV1), h.cardBytes(cardCurrency)
		h.fetch(a.ID, raw1)
		h.fetch(a.ID, raw2)
		r = h.do(req{method: "GET", path: base + "/versions"})
		r.expectStatus(t, http.StatusOK)
		var list struct{ Versions []registry.Version }
		r.json(t, &list)
		if len(list.Versions) != 2 {
			t.Fatalf("%d versions", len(list.Versions))
		}
		bySeq := map[int64]registry.Version{}
		for _, v := range list.Versions {
			bySeq[v.Seq] = v
		}
		if !bySeq[2].Current || bySeq[1].Current || len(bySeq[2].Diff) == 0 {
			t.Fatalf("versions %+v", list.Versions)
		}
		r = h.do(req{method: "GET", path: base + "/versions/1"})
		r.expectStatus(t, http.StatusOK)
		var v1 struct {
			Seq    int64           `json:"seq"`
			SHA256 string          `json:"sha256"`
			Card   json.RawMessage `json:"card"`
		}
		r.json(t, &v1)
		sum := sha256.Sum256(raw1)
		var want, got any
		json.Unmarshal(raw1, &want)
		json.Unmarshal(v1.Card, &got)
		if v1.Seq != 1 || v1.SHA256 != hex.EncodeToString(sum[:]) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("version 1: seq %d sha %s", v1.Seq, v1.SHA256)
		}
		h.do(req{method: "GET", path: base + "/versions/3"}).expectProblem(t, http.StatusNotFound, "not-found")
		h.do(req{method: "GET", path: base + "/versions/zero"}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "GET", path: base + "/versions/0"}).expectProblem(t, http.StatusBadRequest, "validation-failed")
	})
}

// jwks is a JWK Set with one fresh P-256 public key.
func jwks(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	return fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","use":"sig","alg":"ES256","x":%q,"y":%q}]}`, b64(pub[1:33]), b64(pub[33:]))
}

func TestPinKeysAndFetches(t *testing.T) {
	eachStore(t, func(t *testing.T, store *registry.Store) {
		h := newHarness(t, store)
		admin := h.token(registry.RoleAdmin)
		a := h.submit("https://keys.example.com/", "")
		path := "/api/v1/agents/" + a.ID + "/keys"
		set := jwks(t)
		h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(set)}).expectStatus(t, http.StatusOK)
		h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(set), header: []string{"Content-Type", "application/jwk-set+json"}}).
			expectStatus(t, http.StatusOK)
		// A private key, a non-set and a set without keys are refused.
		h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)}).
			expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(`[1]`)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(`{"kty":"EC"}`)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(`{"keys":[],"keys":[]}`)}).expectProblem(t, http.StatusBadRequest, "invalid-json")
		// Keys are validated when pinned: a point off its curve (the start
		// of an invalid-curve attack), a short Ed25519 key, a weak RSA key.
		var good map[string][]map[string]string
		if err := json.Unmarshal([]byte(set), &good); err != nil {
			t.Fatal(err)
		}
		x := good["keys"][0]["x"]
		offCurve := strings.Replace(set, x, x[:len(x)-2]+map[bool]string{true: "AB", false: "AA"}[x[len(x)-2:] == "AA"], 1)
		for _, bad := range []string{
			offCurve,
			`{"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":"AA","y":"AA"}]}`,
			`{"keys":[{"kty":"EC","crv":"secp256k1","kid":"k","x":"` + x + `","y":"` + x + `"}]}`,
			`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k","x":"AAAA"}]}`,
			`{"keys":[{"kty":"RSA","kid":"k","n":"AQAB","e":"AQAB"}]}`,
		} {
			p := h.do(req{method: "PUT", path: path, token: admin, body: jsonBody(bad)}).expectProblem(t, http.StatusBadRequest, "validation-failed")
			if len(p.Errors) != 1 || p.Errors[0].Code != "invalid-jwks" {
				t.Errorf("%s: %+v", bad, p.Errors)
			}
		}
		h.do(req{method: "DELETE", path: path, token: admin}).expectStatus(t, http.StatusOK)
		h.do(req{method: "DELETE", path: path, token: admin}).expectStatus(t, http.StatusOK)
		h.do(req{method: "PUT", path: "/api/v1/agents/nope/keys", token: admin, body: jsonBody(set)}).expectProblem(t, http.StatusNotFound, "not-found")

		h.fetch(a.ID, h.cardBytes(cardV1))
		r := h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID + "/fetches", token: admin})
		r.expectStatus(t, http.StatusOK)
		var body struct{ Fetches []registry.FetchAttempt }
		r.json(t, &body)
		if len(body.Fetches) != 1 || body.Fetches[0].Result != registry.ResultNewVersion || body.Fetches[0].HTTPStatus != 200 {
			t.Fatalf("fetches %+v", body.Fetches)
		}
		h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID + "/fetches?limit=0", token: admin}).expectProblem(t, http.StatusBadRequest, "validation-failed")
		h.do(req{method: "GET", path: "/api/v1/agents/" + a.ID + "/fetches?limit=1000000", token: admin}).expectStatus(t, http.StatusOK)
	})
}
