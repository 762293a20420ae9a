package search

import (
	"fmt"
	"testing"

	"github.com/cardexhq/cardex/agentcard"
)

// docs/threats.md K.96: an agent whose every skill matches carries at most
// MaxMatches matched fields, each with at most MaxMatchFragments
// fragments, however many skills, tags and examples matched.
func TestMatchesBounded(t *testing.T) {
	src := newMemSource()
	var skills []agentcard.Skill
	for i := range 40 {
		s := skill(fmt.Sprintf("s%d", i), "ledger skill", "keeps the ledger", "ledger")
		s.Examples = []string{"ledger one", "ledger two", "ledger three", "ledger four", "ledger five"}
		skills = append(skills, s)
	}
	src.put(testAgent("big", "Ledger agent", "a ledger", skills...), "upsert")
	x := openTest(t, src)
	res := mustSearch(t, x, Query{Q: "ledger", PageSize: 1})
	if len(res.Hits) != 1 {
		t.Fatalf("%d hits", len(res.Hits))
	}
	m := res.Hits[0].Matches
	if len(m) != MaxMatches {
		t.Fatalf("%d matches, want %d", len(m), MaxMatches)
	}
	for _, x := range m {
		if len(x.Fragments) == 0 || len(x.Fragments) > MaxMatchFragments {
			t.Fatalf("match %+v: %d fragments", x, len(x.Fragments))
		}
	}
	// The agent's own fields come first, then the first skills in order.
	if m[0].SkillID != "" || m[0].Field != "name" || m[len(m)-1].SkillID == "" {
		t.Fatalf("matches %+v", m)
	}
}
