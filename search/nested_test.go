package search

import (
	"slices"
	"strings"
	"testing"
)

// "invoices finance" must match within ONE skill: agent a has a skill about
// invoices tagged finance; agent b has invoices in one skill and the finance
// tag on another. Bleve's nested conjunction gives a a within-skill match
// and b none, so a ranks first and only a's skill is a skill-level hit.
func TestNestedWithinOneSkill(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("a", "Ledger Helper", "Back-office automation",
		skill("inv", "Invoice processing", "Reads invoices and extracts line items", "finance"),
		skill("chat", "Chat", "Small talk", "support")), "submitted")
	src.put(testAgent("b", "Office Helper", "Back-office automation",
		skill("inv", "Invoice processing", "Reads invoices and extracts line items", "documents"),
		skill("gl", "General ledger", "Posts journal entries", "finance")), "submitted")
	x := openTest(t, src)

	r := mustSearch(t, x, Query{Q: "invoices finance"})
	if got := hitIDs(r); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("order = %v, want [a b]", got)
	}
	if r.Hits[0].Score <= r.Hits[1].Score {
		t.Fatalf("within-skill score %v not above scattered %v", r.Hits[0].Score, r.Hits[1].Score)
	}
	// b's words were found in two different skills, never both in one.
	perSkill := map[string]string{}
	for _, m := range r.Hits[1].Matches {
		for _, f := range m.Fragments {
			perSkill[m.SkillID] += f
		}
	}
	if !strings.Contains(perSkill["inv"], "<mark>invoices</mark>") || strings.Contains(perSkill["inv"], "<mark>finance</mark>") ||
		!strings.Contains(perSkill["gl"], "<mark>finance</mark>") {
		t.Fatalf("matches of b = %+v", r.Hits[1].Matches)
	}
	sr, err := x.Skills(t.Context(), SkillQuery{Q: "invoices finance"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Skills) != 1 || sr.Skills[0].AgentID != "a" || sr.Skills[0].SkillID != "inv" || sr.TotalSize != 1 {
		t.Fatalf("skills = %+v total %d, want only a/inv", sr.Skills, sr.TotalSize)
	}
	if !slices.Contains(sr.Skills[0].Fragments, "<mark>finance</mark>") {
		t.Fatalf("fragments = %q", sr.Skills[0].Fragments)
	}
	// Matches name the skill and field, HTML-highlighted.
	var found bool
	for _, m := range r.Hits[0].Matches {
		if m.SkillID == "inv" && m.Field == "description" && slices.Contains(m.Fragments, "Reads <mark>invoices</mark> and extracts line items") {
			found = true
		}
	}
	if !found {
		t.Fatalf("matches of a = %+v", r.Hits[0].Matches)
	}
}

// Highlighted fragments are HTML-escaped around the <mark> tags (the UI and
// API insert them as HTML; docs/threats.md H.73).
func TestFragmentsEscapeHTML(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("x", "Evil <script>alert(1)</script> bot", "steals \"cookies\" & more",
		skill("s", "Cookie <img src=x onerror=alert(1)>", "cookie jar", "cookies")), "submitted")
	x := openTest(t, src)
	r := mustSearch(t, x, Query{Q: "cookie"})
	if len(r.Hits) != 1 {
		t.Fatalf("hits = %v", hitIDs(r))
	}
	for _, m := range r.Hits[0].Matches {
		for _, f := range m.Fragments {
			rest := strings.ReplaceAll(strings.ReplaceAll(f, "<mark>", ""), "</mark>", "")
			if strings.ContainsAny(rest, "<>\"") {
				t.Fatalf("unescaped fragment %q", f)
			}
		}
	}
	if len(r.Hits[0].Matches) == 0 {
		t.Fatal("no matches")
	}
}
