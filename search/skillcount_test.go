package search

import (
	"math/rand/v2"
	"testing"

	"github.com/blevesearch/bleve/v2/search"
)

// TestSkillCounterAgrees: the pass's count of matching skills is
// skillsMatching's, for random term locations over skill and other
// fields, any number of words needed, and more words than a mask holds.
func TestSkillCounterAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fields := append([]string{fieldName, fieldDescription}, skillFields...)
	for _, words := range []int{1, 2, 3, 5, 70} {
		wordOf := map[string]int{}
		terms := make([]string, words+2)
		for i := range terms {
			terms[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
			if i < words {
				wordOf[terms[i]] = i
			}
		}
		for need := 1; need <= min(words, 4); need++ {
			count := skillCounter(wordOf, need, words)
			for range 200 {
				var ftls []search.FieldTermLocation
				for range r.IntN(300) {
					l := search.FieldTermLocation{Field: fields[r.IntN(len(fields))], Term: terms[r.IntN(len(terms))]}
					if r.IntN(10) > 0 {
						l.Location.ArrayPositions = []uint64{uint64(r.IntN(20))}
					}
					ftls = append(ftls, l)
				}
				dm := &search.DocumentMatch{FieldTermLocations: ftls}
				if got, want := count(dm), len(skillsMatching(ftls, wordOf, need)); got != want {
					t.Fatalf("%d words, need %d: counter %d, skillsMatching %d", words, need, got, want)
				}
			}
		}
	}
}
