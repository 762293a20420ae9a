package verifier

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
)

// realisticCard is the spec §8.5 sample grown with skills to about 5 KB.
func realisticCard(b *testing.B) string {
	raw := string(readFile(b, "testdata/cards/A2A_main_docs_specification.md_8.5-sample-agent-card.json"))
	tree := parseTree(b, []byte(raw))
	var kept []strictjson.Member
	for _, m := range tree.Object {
		if m.Key != "signatures" {
			kept = append(kept, m)
		}
	}
	tree.Object = kept
	card := string(strictjson.Marshal(tree))
	var extra []string
	for i := 0; len(card)+len(strings.Join(extra, ",")) < 5000; i++ {
		extra = append(extra, fmt.Sprintf(`{"id":"skill-%d","name":"Skill %d","description":"Answers questions about topic %d with sources and citations, in several languages.","tags":["t%d","research"],"examples":["What is %d?"]}`, i, i, i, i, i))
	}
	return strings.Replace(card, `"skills":[`, `"skills":[`+strings.Join(extra, ",")+",", 1)
}

// BenchmarkVerifyES256 measures one card verification (all profiles'
// canonicalization as needed + ES256 verification with a pinned key) of a
// realistic 5 KB signed card. Run with -cpu 1 for the per-core rate.
func BenchmarkVerifyES256(b *testing.B) {
	k := mustKey(b, "P-256")
	card := realisticCard(b)
	signed, err := Sign([]byte(card), k, SignOptions{Kid: "k"})
	if err != nil {
		b.Fatal(err)
	}
	tree := parseTree(b, signed)
	v := New(Config{})
	opts := VerifyOptions{Pinned: publicJWKS(b, k, "k", "ES256")}
	b.SetBytes(int64(len(signed)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if got := v.Verify(b.Context(), tree, opts); got.Status != StatusVerified {
			b.Fatalf("%+v", got)
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifications/s")
}

// BenchmarkVerifyES256WithParse adds the strict parse of the received bytes.
func BenchmarkVerifyES256WithParse(b *testing.B) {
	k := mustKey(b, "P-256")
	signed, err := Sign([]byte(realisticCard(b)), k, SignOptions{Kid: "k"})
	if err != nil {
		b.Fatal(err)
	}
	v := New(Config{})
	opts := VerifyOptions{Pinned: publicJWKS(b, k, "k", "ES256")}
	b.SetBytes(int64(len(signed)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		tree, err := strictjson.Parse(signed)
		if err != nil {
			b.Fatal(err)
		}
		if got := v.Verify(b.Context(), tree, opts); got.Status != StatusVerified {
			b.Fatalf("%+v", got)
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifications/s")
}

func BenchmarkCanonicalize(b *testing.B) {
	tree := parseTree(b, []byte(realisticCard(b)))
	for _, p := range Profiles {
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Canonicalize(p, tree); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkES256Primitive is the floor: one P-256 signature check of the
// same signing input, without parsing, canonicalization or key lookup.
func BenchmarkES256Primitive(b *testing.B) {
	k := mustKey(b, "P-256")
	p, s := signWith(b, realisticCard(b), k, "ES256", `{"alg":"ES256","kid":"k"}`)
	payload, _ := Canonicalize(ProfileSpec, parseTree(b, []byte(realisticCard(b))))
	input := []byte(p + "." + base64.RawURLEncoding.EncodeToString(payload))
	sig, _ := base64.RawURLEncoding.DecodeString(s)
	start := cpuTime(b)
	for b.Loop() {
		if err := verifyPrimitive("ES256", k.Public(), input, sig); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifications/s")
}
