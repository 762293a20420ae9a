package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/registry"
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

// The tag list is cached per scope, prefix and limit until the index
// changes (docs/threats.md K.96): a repeated request is answered from the
// cache, and a write is seen by the next one.
func TestTagsCachedUntilAWrite(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("one", "Agent one", "x", skill("s", "S", "d", "finance", "maps")), registry.ChangeChanged)
	x := openTest(t, src)
	ix := NewIndexer(x, src, IndexerOptions{})
	tags := func() string {
		t.Helper()
		got, err := x.Tags(t.Context(), "", scopeAnonymous, 10)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, v := range got {
			fmt.Fprintf(&b, "%s=%d ", v.Value, v.Count)
		}
		return b.String()
	}
	if got := tags(); got != "finance=1 maps=1 " {
		t.Fatalf("tags %q", got)
	}
	before := x.cache.len()
	if got := tags(); got != "finance=1 maps=1 " || before == 0 || x.cache.len() != before {
		t.Fatalf("repeated: %q, cache %d → %d entries", got, before, x.cache.len())
	}
	src.put(testAgent("two", "Agent two", "y", skill("s", "S", "d", "finance")), registry.ChangeChanged)
	if err := ix.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := tags(); got != "finance=2 maps=1 " {
		t.Fatalf("after a write: %q", got)
	}
}
