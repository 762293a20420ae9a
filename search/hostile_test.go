package search

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// docs/threats.md G.71: query syntax in user input is inert (it is matched
// as words), and size, offset and length are capped.
func TestHostileQueriesInert(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("ok", "Invoice Agent", "reads invoices", skill("s", "Invoices", "reads invoices", "finance")), registry.ChangeSubmitted)
	hidden := testAgent("hidden", "x", "name status removed", skill("s", "x", "x", "x"))
	hidden.Status = registry.StatusPending
	src.put(hidden, registry.ChangeSubmitted)
	for i := range 200 {
		// A vocabulary for fuzzy or wildcard expansion to blow up on.
		src.put(testAgent("v"+strings.Repeat("a", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)),
			"foo"+string(rune('a'+i%26))+string(rune('a'+i/26)), "abc bca cab", skill("s", "foo", "food fool foot", "misc")), registry.ChangeSubmitted)
	}
	x := openTest(t, src)

	for _, q := range []string{
		"name:x +status:removed", "status:pending", "/.*.*.*a/", "*a*b*c*", "foo~2",
		"\"unclosed phrase", "(((((", "+-&&||!(){}[]^\"~*?:\\/", "_id:hidden", "x AND status:pending",
	} {
		r, err := x.Search(t.Context(), Query{Q: q, PageSize: 100})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		for _, id := range hitIDs(r) {
			if id == "hidden" {
				t.Fatalf("%q reached a pending agent", q)
			}
		}
		// Wildcards, regexps and fuzziness are not expanded: nothing in
		// the corpus contains these literal words ("/.*.*.*a/" has none
		// left after stop words, so it matches nothing).
		if q == "*a*b*c*" || q == "/.*.*.*a/" {
			if r.TotalSize != 0 {
				t.Fatalf("%q expanded to %d hits", q, r.TotalSize)
			}
		}
		if q == "foo~2" {
			// "foo~2" is the words "foo" and "2"; no agent has both, so
			// the last try (half the words) finds the skills named
			// "foo", and only the word as written (or stemmed): the fuzzy
			// neighbours (food, fool, foot, fooa…) are not tried.
			if r.TotalSize != 200 {
				t.Fatalf("%q: %d hits", q, r.TotalSize)
			}
			for _, w := range marked(r) {
				if toks := x.analyzer.Analyze([]byte(w)); len(toks) != 1 || string(toks[0].Term) != "foo" {
					t.Fatalf("%q marks %q", q, w) // "fooed" is stemmed "foo"
				}
			}
		}
		if _, err := x.Skills(t.Context(), SkillQuery{Q: q}); err != nil {
			t.Fatalf("skills %q: %v", q, err)
		}
	}

	long := strings.Repeat("invoice ", 100*1024/8)
	if _, err := x.Search(t.Context(), Query{Q: long}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("100 KB query: %v", err)
	}
	if _, err := x.Skills(t.Context(), SkillQuery{Q: long}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("100 KB skills query: %v", err)
	}
	if _, err := x.Search(t.Context(), Query{Q: "\xff\xfe"}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	if _, err := x.Search(t.Context(), Query{Filters: Filters{Tags: make([]string, MaxFilterValues+1)}}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("too many filter values: %v", err)
	}
	if _, err := x.Search(t.Context(), Query{Sort: "score desc"}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("unknown sort: %v", err)
	}
	// size=1000000 is clamped; from=10000000 cannot be expressed: a forged
	// token past the result window is refused.
	r := mustSearch(t, x, Query{PageSize: 1_000_000})
	if len(r.Hits) != MaxPageSize {
		t.Fatalf("page of %d", len(r.Hits))
	}
	key := queryKey("agents", "", scopeAnonymous, SortUpdated, Filters{})
	forged := encodeToken(pageToken{Key: key, After: []string{"0", "x"}, Offset: 10_000_000})
	if _, err := x.Search(t.Context(), Query{PageToken: forged}); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("offset 1e7: %v", err)
	}
	// Many words: only the first MaxQueryWords are used.
	if ws := x.searchWords(strings.Repeat("w", 0) + strings.Join(strings.Fields(strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega one two three four five six seven eight nine ten ", 2)), " ")); len(ws) != MaxQueryWords {
		t.Fatalf("%d words kept", len(ws))
	}
}

// G.71: every query runs under the configured timeout.
func TestQueryTimeout(t *testing.T) {
	src := threeAgents()
	dir := t.TempDir()
	builtIndex(t, dir, src)
	x, err := Open(dir, Options{QueryTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, err := x.Search(t.Context(), Query{Q: "invoices"}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Search with 1ns timeout: %v", err)
	}
}
