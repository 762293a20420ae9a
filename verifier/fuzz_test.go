package verifier

import (
	"path/filepath"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
)

// FuzzCanonicalize: any strictly parsed object canonicalizes under every
// profile without panicking, and the JCS profiles' output is itself a fixed
// point (canonical bytes parse back and canonicalize to the same bytes).
func FuzzCanonicalize(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/cards/*.json")
	more, _ := filepath.Glob("testdata/jcs/input/*.json")
	for _, p := range append(seeds, more...) {
		f.Add(readFile(f, p))
	}
	f.Add([]byte(sampleCard))
	f.Fuzz(func(t *testing.T, raw []byte) {
		tree, err := strictjson.Parse(raw)
		if err != nil || tree.Kind != strictjson.Object {
			return
		}
		// The fast writer and the gowebpki/jcs reference agree.
		got, _ := jcsBytes(tree)
		if want, err := referenceJCS(tree); err != nil || string(got) != string(want) {
			t.Fatalf("JCS writer differs from reference (%v):\n%s\n%s", err, got, want)
		}
		for _, p := range Profiles {
			out, err := Canonicalize(p, tree)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if p == ProfilePythonLegacy {
				continue
			}
			again, err := strictjson.Parse(out)
			if err != nil {
				t.Fatalf("%s output does not parse: %v\n%s", p, err, out)
			}
			if out2, err := referenceJCS(again); err != nil || string(out2) != string(out) {
				t.Fatalf("%s output is not a JCS fixed point:\n%s\n%s", p, out, out2)
			}
		}
	})
}

// FuzzVerify: random protected headers, signatures and unprotected headers
// never panic and never verify without the signing key.
func FuzzVerify(f *testing.F) {
	k := mustKey(f, "P-256")
	p, s := signWith(f, minimalCard, k, "ES256", `{"alg":"ES256","kid":"k"}`)
	f.Add(p, s, `{}`)
	f.Add("eyJhbGciOiJub25lIn0", "", `{"kid":"x"}`)
	f.Add(p+"=", s+"+", `null`)
	f.Add("e30", "AAAA", `{"crit":["b64"]}`)
	other := publicJWKS(f, mustKey(f, "P-256"), "k", "")
	v := New(Config{})
	f.Fuzz(func(t *testing.T, protected, signature, header string) {
		entry := &strictjson.Value{Kind: strictjson.Object}
		addString(entry, "protected", protected)
		addString(entry, "signature", signature)
		if h, err := strictjson.Parse([]byte(header)); err == nil {
			entry.Object = append(entry.Object, strictjson.Member{Key: "header", Value: h})
		}
		card := parseTree(t, []byte(minimalCard))
		card.Object = append(card.Object, strictjson.Member{Key: "signatures", Value: &strictjson.Value{Kind: strictjson.Array, Array: []*strictjson.Value{entry}}})
		got := v.Verify(t.Context(), card, VerifyOptions{Pinned: other, Origin: "https://agent.example"})
		if got.Status == StatusVerified || len(got.Signatures) != 1 {
			t.Fatalf("%+v", got)
		}
	})
}
