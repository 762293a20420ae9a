package agentfleet_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/cardexhq/cardex/agentfleet"
	"github.com/cardexhq/cardex/strictjson"
)

// jcsSigner signs a generated card the way the spec does for cards without
// default-valued members: JCS of the card, detached ES256 JWS. It stands in
// for the verifier's Sign in these self-tests.
func jcsSigner(card []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	payload, err := jcs.Transform(card)
	if err != nil {
		return nil, err
	}
	hdr, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JOSE", "kid": kid, "jku": jku})
	protected := base64.RawURLEncoding.EncodeToString(hdr)
	digest := sha256.Sum256([]byte(protected + "." + base64.RawURLEncoding.EncodeToString(payload)))
	r, s, err := ecdsa.Sign(rand.Reader, key.(*ecdsa.PrivateKey), digest[:])
	if err != nil {
		return nil, err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	v, err := strictjson.Parse(card)
	if err != nil {
		return nil, err
	}
	entry := &strictjson.Value{Kind: strictjson.Object, Object: []strictjson.Member{
		{Key: "protected", Value: &strictjson.Value{Kind: strictjson.String, String: protected}},
		{Key: "signature", Value: &strictjson.Value{Kind: strictjson.String, String: base64.RawURLEncoding.EncodeToString(sig)}},
	}}
	v.Object = append(v.Object, strictjson.Member{Key: "signatures", Value: &strictjson.Value{Kind: strictjson.Array, Array: []*strictjson.Value{entry}}})
	return strictjson.Marshal(v), nil
}

// verify checks a served card against the key set at jwksURL: it returns
// the protected header's jku, or an error if the signature does not verify.
func verify(t *testing.T, card []byte, jwksURL string) (string, error) {
	t.Helper()
	v, err := strictjson.Parse(card)
	if err != nil {
		t.Fatal(err)
	}
	sigs := v.Get("signatures")
	if sigs == nil || len(sigs.Array) != 1 {
		t.Fatalf("card has no signature")
	}
	protected := sigs.Array[0].Get("protected").String
	signature := sigs.Array[0].Get("signature").String
	var rest []strictjson.Member
	for _, m := range v.Object {
		if m.Key != "signatures" {
			rest = append(rest, m)
		}
	}
	v.Object = rest
	payload, err := jcs.Transform(strictjson.Marshal(v))
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct{ Kid, Jku string }
	raw, _ := base64.RawURLEncoding.DecodeString(protected)
	json.Unmarshal(raw, &hdr)
	resp, err := http.Get(jwksURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatalf("JWKS %s: %v", body, err)
	}
	keys := set.Key(hdr.Kid)
	if len(keys) != 1 {
		return hdr.Jku, errors.New("kid not in key set")
	}
	jws, err := jose.ParseDetached(protected+".."+signature, payload, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return hdr.Jku, err
	}
	_, err = jws.Verify(keys[0].Key)
	return hdr.Jku, err
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

func TestSignedAgentsVerifyAtTheirOrigin(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2, BaseAddr: "127.0.0.60", Signer: jcsSigner})
	signed := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: fleet.Hosts()[0]})
	jku, err := verify(t, get(t, signed.URL()), signed.Host().JWKSURL())
	if err != nil || jku != signed.Origin()+agentfleet.JWKSPath {
		t.Errorf("signed: jku %s, %v", jku, err)
	}
	if signed.KeyID() == "" {
		t.Error("no kid")
	}
	// Agents of one host share its key: the key set holds one key.
	second := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Signed, Host: fleet.Hosts()[0]})
	if _, err := verify(t, get(t, second.URL()), second.Host().JWKSURL()); err != nil || second.KeyID() != signed.KeyID() {
		t.Errorf("second signed agent: %v (kid %s vs %s)", err, second.KeyID(), signed.KeyID())
	}
	var set struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(get(t, signed.Host().JWKSURL()), &set); err != nil || len(set.Keys) != 1 {
		t.Errorf("host key set has %d keys (%v), want 1", len(set.Keys), err)
	}

	tampered := fleet.Add(agentfleet.Agent{Behavior: agentfleet.Tampered, Host: fleet.Hosts()[0]})
	body := get(t, tampered.URL())
	if !strings.Contains(string(body), "(tampered)") {
		t.Error("tampered card unchanged")
	}
	if _, err := verify(t, body, tampered.Host().JWKSURL()); err == nil {
		t.Error("tampered card verifies")
	}

	off := fleet.Add(agentfleet.Agent{Behavior: agentfleet.OffOriginJKU, Host: fleet.Hosts()[0]})
	body = get(t, off.URL())
	other := fleet.Hosts()[1]
	jku, err = verify(t, body, other.JWKSURL())
	if err != nil || jku != other.JWKSURL() {
		t.Errorf("off-origin: jku %s, %v (want it to verify with the other host's key set)", jku, err)
	}
	if _, err := verify(t, body, off.Host().JWKSURL()); err == nil {
		t.Error("off-origin agent's key is on its own origin too")
	}
}

func TestSignedNeedsSigner(t *testing.T) {
	fleet := agentfleet.Start(t, agentfleet.Options{Hosts: 2})
	for _, b := range []agentfleet.Behavior{agentfleet.Signed, agentfleet.Tampered, agentfleet.OffOriginJKU} {
		if _, err := fleet.TryAdd(agentfleet.Agent{Behavior: b}); !errors.Is(err, agentfleet.ErrNoSigner) {
			t.Errorf("%s without a signer: %v", b, err)
		}
	}
	single := agentfleet.Start(t, agentfleet.Options{Signer: jcsSigner})
	if _, err := single.TryAdd(agentfleet.Agent{Behavior: agentfleet.OffOriginJKU}); err == nil {
		t.Error("off-origin jku accepted on a one-host fleet")
	}
}
