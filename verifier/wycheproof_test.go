package verifier

import (
	"crypto"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
	"github.com/go-jose/go-jose/v4"
)

// Project Wycheproof vectors (testdata/wycheproof, Apache-2.0, LICENSE
// beside them), docs/threats.md D.53.

type wpFile struct {
	Groups []struct {
		KeyJWK    json.RawMessage `json:"publicKeyJwk"`
		KeyJWKAlt json.RawMessage `json:"keyJwk"`
		Public    json.RawMessage `json:"public"`
		Comment   string          `json:"comment"`
		PublicKey struct {
			Uncompressed string `json:"uncompressed"`
		} `json:"publicKey"`
		Tests []wpTest `json:"tests"`
	} `json:"testGroups"`
}

type wpTest struct {
	TcID    int      `json:"tcId"`
	Comment string   `json:"comment"`
	Flags   []string `json:"flags"`
	Msg     string   `json:"msg"`
	Sig     string   `json:"sig"`
	JWS     string   `json:"jws"`
	Result  string   `json:"result"`
}

func loadWycheproof(t *testing.T, name string) wpFile {
	t.Helper()
	var f wpFile
	if err := json.Unmarshal(readFile(t, "testdata/wycheproof/"+name), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// The primitive layer returns ok ⇔ result == "valid". For "acceptable"
// vectors the outcome is pinned here: Cardex rejects them all (the only one
// is an RSA PKCS#1 signature whose DigestInfo lacks the NULL parameter).
func TestWycheproofPrimitives(t *testing.T) {
	files := []struct {
		name, alg string
		tests     int
	}{
		{"ecdsa_secp256r1_sha256_p1363_test.json", "ES256", 262},
		{"ecdsa_secp384r1_sha384_p1363_test.json", "ES384", 280},
		{"ed25519_test.json", "EdDSA", 151},
		{"rsa_signature_2048_sha256_test.json", "RS256", 259},
		{"rsa_pss_2048_sha256_mgf1_32_test.json", "PS256", 108},
	}
	acceptable := map[string]bool{"rsa_signature_2048_sha256_test.json/8": false}
	for _, file := range files {
		t.Run(file.name, func(t *testing.T) {
			f := loadWycheproof(t, file.name)
			n := 0
			for _, g := range f.Groups {
				pub := groupKey(t, g.KeyJWK, g.KeyJWKAlt, g.PublicKey.Uncompressed, file.alg)
				for _, tc := range g.Tests {
					n++
					msg, err1 := hex.DecodeString(tc.Msg)
					sig, err2 := hex.DecodeString(tc.Sig)
					if err1 != nil || err2 != nil {
						t.Fatalf("tcId %d: bad hex", tc.TcID)
					}
					ok := verifyPrimitive(file.alg, pub, msg, sig) == nil
					want := tc.Result == "valid"
					if tc.Result == "acceptable" {
						pinned, known := acceptable[file.name+"/"+strconv.Itoa(tc.TcID)]
						if !known {
							t.Fatalf("tcId %d: acceptable vector without a pinned outcome", tc.TcID)
						}
						want = pinned
					}
					if ok != want {
						t.Errorf("tcId %d (%s %v): ok=%v, result %s", tc.TcID, tc.Comment, tc.Flags, ok, tc.Result)
					}
				}
			}
			if n != file.tests {
				t.Fatalf("ran %d vectors, want %d", n, file.tests)
			}
		})
	}
}

// verifyCompactJWS runs one compact JWS through the verifier's per-signature
// path with the given JWKS pinned and the JWS payload standing in for every
// profile's canonical bytes.
func verifyCompactJWS(t *testing.T, jws string, jwks []byte) (SignatureResult, bool) {
	t.Helper()
	if strings.HasPrefix(strings.TrimSpace(jws), "{") {
		return SignatureResult{Reason: "JSON serialization"}, false // cards carry compact parts only
	}
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return SignatureResult{Reason: "not three parts"}, false
	}
	payload, err := decodeB64URL(parts[1])
	if err != nil {
		return SignatureResult{Reason: err.Error()}, false
	}
	r := New(Config{}).newRun(&strictjson.Value{Kind: strictjson.Object}, VerifyOptions{Pinned: jwks})
	for _, p := range Profiles {
		r.payloads[p] = payload
	}
	entry := &strictjson.Value{Kind: strictjson.Object}
	addString(entry, "protected", parts[0])
	addString(entry, "signature", parts[2])
	res := r.examine(t.Context(), 0, entry)
	return res, res.Status == StatusVerified
}

// groupKey reads a test group's public key: its JWK, or for EC keys the
// JWK format cannot carry here, the uncompressed point.
func groupKey(t *testing.T, jwk1, jwk2 json.RawMessage, uncompressed, alg string) crypto.PublicKey {
	t.Helper()
	raw := jwk1
	if raw == nil {
		raw = jwk2
	}
	if raw != nil {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			t.Fatalf("group key: %v", err)
		}
		return k.Key
	}
	b, err := hex.DecodeString(uncompressed)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(allowedAlgs[alg].curve, b)
	if err != nil {
		t.Fatalf("group key: %v", err)
	}
	return pub
}

func jwksFromGroup(public json.RawMessage) []byte {
	if len(public) == 0 {
		return nil
	}
	if strings.Contains(string(public), `"keys"`) {
		return public
	}
	return []byte(`{"keys":[` + string(public) + `]}`)
}

// Valid JWS vectors with an allowed algorithm that Cardex still rejects, and
// why. Everything else valid with an allowed algorithm must verify.
var wycheproofJWSRejectedValid = map[string]string{
	"json_web_signature_test.json/346": "header alg PS384, key declares PS256 (key alg must match, D.41)",
	"json_web_signature_test.json/350": "header alg PS384, key declares PS256 (key alg must match, D.41)",
	"json_web_signature_test.json/347": `key declares alg "ES521", not ES512`,
	"json_web_signature_test.json/351": `key declares alg "ES521", not ES512`,
}

func TestWycheproofJWS(t *testing.T) {
	for _, name := range []string{"json_web_signature_test.json", "json_web_key_test.json"} {
		t.Run(name, func(t *testing.T) {
			var verified, total int
			for _, g := range loadWycheproof(t, name).Groups {
				jwks := jwksFromGroup(g.Public)
				for _, tc := range g.Tests {
					total++
					res, ok := verifyCompactJWS(t, tc.JWS, jwks)
					alg := headerAlg(tc.JWS)
					key := fmt.Sprintf("%s/%d", name, tc.TcID)
					switch {
					case tc.Result != "valid":
						if ok {
							t.Errorf("tcId %d (%s): invalid vector verified", tc.TcID, tc.Comment)
						}
					case !isAllowedAlg(alg):
						if ok {
							t.Errorf("tcId %d: valid vector with disallowed alg %q verified", tc.TcID, alg)
						}
					case wycheproofJWSRejectedValid[key] != "":
						if ok {
							t.Errorf("tcId %d: expected rejection (%s)", tc.TcID, wycheproofJWSRejectedValid[key])
						}
					default:
						if !ok {
							t.Errorf("tcId %d (%s): valid %s vector rejected: %s", tc.TcID, tc.Comment, alg, res.Reason)
						}
					}
					if ok {
						verified++
					}
				}
			}
			t.Logf("%d vectors, %d verified", total, verified)
		})
	}
}

func headerAlg(jws string) string {
	p, _, _ := strings.Cut(jws, ".")
	b, err := decodeB64URL(p)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	json.Unmarshal(b, &h)
	return h.Alg
}
