package search

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cardexhq/cardex/registry"
)

// A catalog entry's representativeQueries are searchable text: a query that
// matches only one of them finds the agent, with one highlighted fragment
// per matching query, and a change of them (a ChangeChanged in the log)
// reaches the index.
func TestRepresentativeQueriesSearchable(t *testing.T) {
	src := newMemSource()
	fx := testAgent("fx", "Currency converter", "Converts money between currencies.",
		skill("convert", "Convert", "Converts an amount", "finance"))
	fx.CatalogQueries = []string{"what is the yen rate today?", "convert 100 dollars", "yen to <b>euro</b> & back"}
	src.put(fx, registry.ChangeSubmitted)
	src.put(testAgent("other", "Weather", "Forecasts the weather.", skill("w", "Forecast", "Forecasts rain")), registry.ChangeSubmitted)
	x := openTest(t, src)

	r := mustSearch(t, x, Query{Q: "yen", Scope: scopeAnonymous})
	if got := hitIDs(r); !slices.Equal(got, []string{"fx"}) || r.TotalSize != 1 {
		t.Fatalf("yen: %v (total %d)", got, r.TotalSize)
	}
	want := `[{ representativeQueries [what is the <mark>yen</mark> rate today? <mark>yen</mark> to &lt;b&gt;euro&lt;/b&gt; &amp; back]}]`
	if got := fmt.Sprint(r.Hits[0].Matches); got != want {
		t.Fatalf("matches\n got %s\nwant %s", got, want)
	}
	// A word of the card and one of a query: both fields are reported,
	// the agent's own first.
	r = mustSearch(t, x, Query{Q: "currency dollars", Scope: scopeAnonymous})
	if got := hitIDs(r); !slices.Equal(got, []string{"fx"}) {
		t.Fatalf("currency dollars: %v", got)
	}
	// ("euro" is marked too: dollar and euro are in the built-in currency
	// group, synonyms.txt.)
	want = `[{ name [<mark>Currency</mark> converter]} { description [Converts money between <mark>currencies</mark>.]} { representativeQueries [convert 100 <mark>dollars</mark> yen to &lt;b&gt;<mark>euro</mark>&lt;/b&gt; &amp; back]}]`
	if got := fmt.Sprint(r.Hits[0].Matches); got != want {
		t.Fatalf("matches\n got %s\nwant %s", got, want)
	}
	// Sorted listings read the stored copy too, and show no matches.
	r = mustSearch(t, x, Query{Q: "yen", Scope: scopeAnonymous, Sort: SortName})
	if got := hitIDs(r); !slices.Equal(got, []string{"fx"}) || r.Hits[0].Matches != nil {
		t.Fatalf("yen by name: %v %v", got, r.Hits)
	}

	// The catalog's next crawl changes the queries.
	fx.CatalogQueries = []string{"how many pesos is a pound"}
	src.put(fx, registry.ChangeChanged)
	if err := NewIndexer(x, src, IndexerOptions{}).Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := mustSearch(t, x, Query{Q: "yen", Scope: scopeAnonymous}); r.TotalSize != 0 {
		t.Fatalf("old queries still found: %v", hitIDs(r))
	}
	r = mustSearch(t, x, Query{Q: "pesos", Scope: scopeAnonymous})
	if got := hitIDs(r); !slices.Equal(got, []string{"fx"}) {
		t.Fatalf("pesos: %v", got)
	}
	want = `[{ representativeQueries [how many <mark>pesos</mark> is a pound]}]`
	if got := fmt.Sprint(r.Hits[0].Matches); got != want {
		t.Fatalf("matches\n got %s\nwant %s", got, want)
	}
}

func TestStoredStringsRoundTrip(t *testing.T) {
	in := []string{"", "a", string(make([]byte, 300)), "é ü"}
	if got := decodeStrings(encodeStrings(in)); !slices.Equal(got, in) {
		t.Fatalf("round trip %q", got)
	}
	enc := encodeStrings([]string{"abc", "defg"})
	if got := decodeStrings(enc[:len(enc)-1]); !slices.Equal(got, []string{"abc"}) {
		t.Fatalf("damaged: %q", got)
	}
	if got := decodeStrings("\xff\xff\xff"); got != nil {
		t.Fatalf("garbage: %q", got)
	}
}
