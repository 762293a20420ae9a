package corpus

import (
	"reflect"
	"strings"
	"testing"
)

func TestDeterministic(t *testing.T) {
	a, b := New(7).Agents(50), New(7).Agents(50)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different agents")
	}
	if reflect.DeepEqual(New(7).Agent(3), New(8).Agent(3)) {
		t.Fatal("different seeds gave the same agent")
	}
}

// The vocabulary must be large and skewed: thousands of distinct words,
// with the most frequent far more common than the median.
func TestVocabularyIsRealistic(t *testing.T) {
	counts := map[string]int{}
	skills := 0
	for _, a := range New(1).Agents(2000) {
		if a.Card == nil || a.ID == "" || len(a.Card.Skills) == 0 || len(a.Card.Skills) > 10 {
			t.Fatalf("bad agent %+v", a)
		}
		skills += len(a.Card.Skills)
		for _, f := range strings.Fields(a.Card.Description) {
			counts[strings.ToLower(strings.Trim(f, "."))]++
		}
		for _, s := range a.Card.Skills {
			for _, f := range strings.Fields(s.Description) {
				counts[strings.ToLower(strings.Trim(f, "."))]++
			}
		}
	}
	if len(counts) < 2000 {
		t.Fatalf("only %d distinct words", len(counts))
	}
	top, ones := 0, 0
	for _, c := range counts {
		top = max(top, c)
		if c == 1 {
			ones++
		}
	}
	if top < 100 || ones < len(counts)/10 {
		t.Fatalf("not Zipf-like: max %d, hapaxes %d of %d", top, ones, len(counts))
	}
	t.Logf("2000 agents, %d skills, %d distinct words, top count %d, %d words seen once", skills, len(counts), top, ones)
}
