package web

import (
	"fmt"
	"testing"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search"
)

// docs/threats.md H.74: whatever a fragment holds, highlight emits escaped
// text and balanced <mark> tags only.
func TestH74HighlightReescapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain &amp; <mark>word</mark>", "plain &amp; <mark>word</mark>"},
		{"&lt;script&gt;alert(1)&lt;/script&gt; <mark>x</mark>", "&lt;script&gt;alert(1)&lt;/script&gt; <mark>x</mark>"},
		// Unescaped markup (a search package that forgot to escape) is escaped here.
		{`<script>alert(1)</script><mark>x</mark>`, "&lt;script&gt;alert(1)&lt;/script&gt;<mark>x</mark>"},
		{`"><svg onload=alert(1)>`, "&#34;&gt;&lt;svg onload=alert(1)&gt;"},
		// Unbalanced or nested marks are repaired, never passed through.
		{"<mark>a<mark>b</mark></mark>c</mark>", "<mark>ab</mark>c"},
		{"<mark>open", "<mark>open</mark>"},
		{"<MARK onclick=x>a</MARK>", "&lt;MARK onclick=x&gt;a&lt;/MARK&gt;"},
		// Double-escaped text stays visible text.
		{"&amp;lt;b&amp;gt;", "&amp;lt;b&amp;gt;"},
		// Bidi controls are shown, not obeyed.
		{"abc\u202Edef<mark>g</mark>", "abc⟨U+202E⟩def<mark>g</mark>"},
	} {
		if got := string(highlight(c.in)); got != c.want {
			t.Errorf("highlight(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestVisibleShowsInvisibleCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":            "plain text",
		"evil\u202Egnp.exe":     "evil⟨U+202E⟩gnp.exe",
		"pay\u200Bpal":          "pay⟨U+200B⟩pal",
		"\uFEFFbom":             "⟨U+FEFF⟩bom",
		"iso\u2066late\u2069":   "iso⟨U+2066⟩late⟨U+2069⟩",
		"bell\x07 and \x1b[31m": "bell⟨U+0007⟩ and ⟨U+001B⟩[31m",
		"line\nbreak\ttab":      "line\nbreak\ttab",
		"Café <Agent> & Co":     "Café <Agent> & Co",
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShort(t *testing.T) {
	if got := short(10, "short"); got != "short" {
		t.Errorf("%q", got)
	}
	if got := short(20, "a sentence that is much longer than twenty"); got != "a sentence that is…" {
		t.Errorf("%q", got)
	}
}

// A match in the representativeQueries of the agent's catalog entry is
// shown as at most two marked queries, escaped like every fragment.
func TestResultShowsMatchingQueries(t *testing.T) {
	a := &registry.Agent{ID: "x", Host: "x.example.com"}
	h := search.Hit{ID: "x", Matches: []search.Match{{Field: search.MatchQueries, Fragments: []string{
		"how many <mark>zlotys</mark>?", "&lt;script&gt; <mark>zlotys</mark>", "third <mark>zlotys</mark>"}}}}
	v := resultOf(a, h.Matches)
	got := fmt.Sprint(v.QueriesHL)
	want := "[how many <mark>zlotys</mark>? &lt;script&gt; <mark>zlotys</mark>]"
	if got != want || v.NameHL != "" || v.DescriptionHL != "" || len(v.Skills) != 0 {
		t.Fatalf("queries %s, want %s (view %+v)", got, want, v)
	}
}
