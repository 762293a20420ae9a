package verifier

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cardexhq/cardex/strictjson"
	"github.com/gowebpki/jcs"
)

// referenceJCS is the same through github.com/gowebpki/jcs: Transform of
// the tree's JSON text. It is the oracle appendJCS is tested against.
func referenceJCS(tree *strictjson.Value) ([]byte, error) {
	out, err := jcs.Transform(strictjson.Marshal(tree))
	if err != nil {
		return nil, fmt.Errorf("verifier: RFC 8785: %w", err)
	}
	return out, nil
}

// appendJCS and the gowebpki/jcs reference agree on every JCS vector, every
// card in testdata and every profile's pruned tree.
func TestJCSWriterMatchesReference(t *testing.T) {
	paths, _ := filepath.Glob("testdata/cards/*.json")
	inputs, _ := filepath.Glob("testdata/jcs/input/*.json")
	paths = append(paths, inputs...)
	checked := 0
	for _, p := range paths {
		tree, err := strictjson.Parse(readFile(t, p))
		if err != nil {
			continue // the INVALID fixture
		}
		want, err := referenceJCS(tree)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got, _ := jcsBytes(tree); string(got) != string(want) {
			t.Errorf("%s:\ngot  %s\nwant %s", p, got, want)
		}
		checked++
	}
	if checked < 15 {
		t.Fatalf("checked only %d documents", checked)
	}
}

// E.54: ECMAScript number formatting against the reference for edge values
// and 200,000 random IEEE doubles (bit patterns, so every exponent occurs).
func TestES6NumbersMatchReference(t *testing.T) {
	values := []float64{0, 1, -1, 0.1, 100, 1e21, 1e20, 123456789012345680000, 1e-6, 1e-7, 0.000001, 5e-324,
		math.MaxFloat64, -math.MaxFloat64, 9007199254740993, 333333333.33333329, 1e+30, 4.5, 2e-3, 1.5e-7}
	r := rand.New(rand.NewPCG(1, 2))
	for len(values) < 200_000 {
		f := math.Float64frombits(r.Uint64())
		if !math.IsInf(f, 0) && !math.IsNaN(f) {
			values = append(values, f)
		}
	}
	var b [8]byte
	for _, f := range values {
		lit := fmt.Sprintf("%v", f)
		want, err := jcs.Transform([]byte("[" + lit + "]"))
		if err != nil {
			binary.BigEndian.PutUint64(b[:], math.Float64bits(f))
			t.Fatalf("reference rejects %s (%x): %v", lit, b, err)
		}
		got := "[" + string(appendES6Number(nil, f)) + "]"
		if got != string(want) {
			t.Fatalf("%s: got %s, want %s", lit, got, want)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	ordered := []string{"", "\r", "1", "10", "A", "a", "\u00e9", "\u20ac", "\U0001F600", "\U0001F601", "\uFB33", "\uFFFF"}
	for i := range ordered {
		for j := range ordered {
			got := compareUTF16(ordered[i], ordered[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Fatalf("compare(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}
