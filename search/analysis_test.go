package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/search/corpus"
)

func TestWordParts(t *testing.T) {
	for in, want := range map[string][]string{
		"camelCase":   {"camel", "Case"},
		"PostgreSQL":  {"Postgre", "SQL"},
		"PDFParser":   {"PDF", "Parser"},
		"text_to_sql": {"text", "to", "sql"},
		"gpt4o":       {"gpt", "4", "o"},
		"_x__y_":      {"x", "y"},
		"plain":       {"plain"},
		"ÉtéBrûlant":  {"Été", "Brûlant"},
		"":            nil,
	} {
		var got []string
		for _, p := range wordParts([]byte(in)) {
			got = append(got, in[p[0]:p[1]])
		}
		if !slices.Equal(got, want) {
			t.Errorf("wordParts(%q) = %q, want %q", in, got, want)
		}
	}
}

// The analyzer folds accents and adds compound parts at the word's
// position, with the offsets of the original text.
func TestAnalyzerFoldsAndSplits(t *testing.T) {
	x := openTest(t, newMemSource())
	in := "Café textToSpeech"
	var got []string
	for _, tk := range x.analyzer.Analyze([]byte(in)) {
		got = append(got, string(tk.Term)+"@"+in[tk.Start:tk.End]+"#"+string(rune('0'+tk.Position)))
	}
	want := []string{"cafe@Café#1", "texttospeech@textToSpeech#2", "text@text#2", "speech@Speech#2"}
	if !slices.Equal(got, want) {
		t.Fatalf("tokens %q, want %q", got, want)
	}
}

func TestFragment(t *testing.T) {
	if got := fragment(`a <b> & "c"`, []span{{3, 4}}); got != `a &lt;<mark>b</mark>&gt; &amp; &#34;c&#34;` {
		t.Fatalf("short: %q", got)
	}
	// Overlapping spans (a word and its compound part): the longer wins.
	if got := fragment("PostgreSQL tuning", []span{{0, 7}, {0, 10}, {7, 10}}); got != "<mark>PostgreSQL</mark> tuning" {
		t.Fatalf("overlap: %q", got)
	}
	long := strings.Repeat("lorem ipsum ", 30) + "needle " + strings.Repeat("dolor sit ", 40)
	at := strings.Index(long, "needle")
	got := fragment(long, []span{{at, at + 6}})
	if !strings.HasPrefix(got, highlightEllipsis) || !strings.HasSuffix(got, highlightEllipsis) ||
		!strings.Contains(got, " <mark>needle</mark> dolor") || len(got) > fragmentBytes+20 {
		t.Fatalf("long: %q", got)
	}
	// Spans outside the text (a stale location) are ignored.
	if got := fragment("short", []span{{2, 40}}); got != "short" {
		t.Fatalf("out of range: %q", got)
	}
}

func TestSynonymsAndParse(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("bikes", "Wheel Works", "Bicycle repair shop finder", skill("fix", "Repairs", "Finds a bicycle mechanic")), registry.ChangeSubmitted)
	src.put(testAgent("cars", "Garage Finder", "Vehicle servicing", skill("svc", "Service", "Books a garage slot")), registry.ChangeSubmitted)
	plain := openTest(t, src)
	if r := mustSearch(t, plain, Query{Q: "bike"}); len(r.Hits) != 0 {
		t.Fatalf("without the admin's group: %v", hitIDs(r))
	}
	// Built in: car ~ vehicle.
	if r := mustSearch(t, plain, Query{Q: "car servicing"}); !slices.Equal(hitIDs(r), []string{"cars"}) {
		t.Fatalf("built-in synonym: %v", hitIDs(r))
	}
	groups, err := ParseSynonyms(strings.NewReader("# shop words\nbike, bicycle, cycle\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := Open(t.TempDir(), Options{LockTimeout: 200 * time.Millisecond, Synonyms: groups})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if err := x.Rebuild(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	r := mustSearch(t, x, Query{Q: "bike repair"})
	if !slices.Equal(hitIDs(r), []string{"bikes"}) {
		t.Fatalf("with the admin's group: %v", hitIDs(r))
	}
	// The synonym is highlighted where it matched.
	var frags []string
	for _, m := range r.Hits[0].Matches {
		frags = append(frags, m.Fragments...)
	}
	if !slices.Contains(frags, "<mark>Bicycle</mark> <mark>repair</mark> shop finder") {
		t.Fatalf("fragments %q", frags)
	}
	for in, want := range map[string]string{
		"lonely\n":                          "line 1: a group needs at least two words",
		strings.Repeat("w,", 17) + "w\n":    "line 1: 18 words, at most 16",
		"a,b\n#\nsolo # the only word\n":    "line 3: a group needs at least two words",
		strings.Repeat("x, y\n", 1001) + "": "more than 1000 groups",
	} {
		if _, err := ParseSynonyms(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSynonyms(%.20q) = %v, want %q", in, err, want)
		}
	}
}

// Typos are tolerated only when the query finds nothing as written.
func TestTyposOnlyWhenNothingFound(t *testing.T) {
	src := newMemSource()
	src.put(testAgent("right", "Forecast Desk", "Weather forecast", skill("f", "Forecast", "Hourly forecast")), registry.ChangeSubmitted)
	src.put(testAgent("typo", "Forcast Desk", "Weather forcast", skill("f", "Forcast", "Hourly forcast")), registry.ChangeSubmitted)
	x := openTest(t, src)
	for q, want := range map[string][]string{
		"forecast": {"right"},
		"forcast":  {"typo"},
		"forekast": {"right"}, // one edit from forecast, two from forcast: only the nearest
		"fore":     {},        // too short to guess
	} {
		got := hitIDs(mustSearch(t, x, Query{Q: q}))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
	if _, err := x.Search(t.Context(), Query{Q: "forekast", PageToken: "x"}); !errors.Is(err, ErrInvalidPageToken) {
		t.Fatalf("bad token: %v", err)
	}
}

// mayHold relies on Porter stemming never changing the first two letters
// of a word: checked on every word of the generated corpus's vocabulary and
// on the relevance set's cards, through the text analyzer itself.
func TestPorterKeepsTwoLetters(t *testing.T) {
	an := newMapping().AnalyzerNamed(analyzerText)
	noStem := &analysis.DefaultAnalyzer{}
	if da, ok := an.(*analysis.DefaultAnalyzer); ok {
		noStem = &analysis.DefaultAnalyzer{Tokenizer: da.Tokenizer, TokenFilters: da.TokenFilters[:len(da.TokenFilters)-1]}
	} else {
		t.Fatal("the text analyzer is not a DefaultAnalyzer: its stemmer cannot be checked alone")
	}
	var text strings.Builder
	gen := corpus.New(1)
	for i := range 3000 {
		a := gen.Agent(i)
		if a.Card == nil {
			continue
		}
		text.WriteString(a.Card.Name + " " + a.Card.Description + "\n")
		for _, s := range a.Card.Skills {
			text.WriteString(s.Name + " " + s.Description + " " + strings.Join(s.Tags, " ") + " " + strings.Join(s.Examples, " ") + "\n")
		}
	}
	text.WriteString("happy crying keys sky ties dies agreed generalization relational conditional formality hopefulness electrical Café naïve PostgreSQL gpt4 text_to_sql")
	raw := noStem.Analyze([]byte(text.String()))
	stemmed := an.Analyze([]byte(text.String()))
	if len(raw) != len(stemmed) || len(raw) < 10000 {
		t.Fatalf("%d words before stemming, %d after: the stemmer must come last and keep every word", len(raw), len(stemmed))
	}
	for i := range raw {
		w, s := string(raw[i].Term), string(stemmed[i].Term)
		k := min(2, len(s))
		if len(w) < k || w[:k] != s[:k] {
			t.Fatalf("%q stems to %q: the first two letters changed", w, s)
		}
	}
}

// Skills survive their stored form exactly, and a damaged value gives the
// skills before the damage instead of failing the page.
func TestStoredSkillsRoundTrip(t *testing.T) {
	skills := []storedSkill{
		{ID: "a", Name: "Café <b>", Description: strings.Repeat("x", 300), Tags: []string{"t1", ""}, Examples: []string{"e"}},
		{ID: "b"},
		{ID: "c", Tags: []string{"only"}},
	}
	raw := encodeSkills(skills)
	got := decodeSkills(raw)
	if !slices.EqualFunc(got, skills, func(a, b storedSkill) bool {
		return a.ID == b.ID && a.Name == b.Name && a.Description == b.Description && slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Examples, b.Examples)
	}) {
		t.Fatalf("round trip: %+v", got)
	}
	if n := len(decodeSkills(raw[:len(raw)-3])); n != 2 {
		t.Fatalf("a cut value decoded to %d skills, want the 2 before the cut", n)
	}
	for _, bad := range []string{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x05ab", "\x01a\x00\x00\xff\x7f"} {
		if got := decodeSkills(bad); len(got) != 0 {
			t.Fatalf("%q decoded to %+v", bad, got)
		}
	}
	if decodeSkills("") != nil {
		t.Fatal("no skills must decode to none")
	}
}

// The highlighter finds exactly the words the text analyzer finds for a
// query's terms, with the same byte ranges, however the text is cut into
// runs and whichever runs it skips.
func TestHighlighterFindsWhatTheAnalyzerFinds(t *testing.T) {
	an := newMapping().AnalyzerNamed(analyzerText)
	runs := newRunCache(an)
	texts := []string{
		"Reconciles invoices, payments and ledger entries; exports to CSV.",
		"PDFParser reads gpt4 output from text_to_sql and PostgreSQL's logs",
		"Café résumé screening — naïve “quotes” and 1,000.50 numbers a.b c:d e'f",
		"  leading\tand\ntrailing   whitespace\r\nand\fodd\vones  ",
		"don't stop: it's the agents' job (really!) #hashtag @mention x-y-z",
		"日本語のテキスト mixed with English words and 東京 tokens",
		"ALLCAPS words and MixedCASEWords and snake_case_words_2024",
		"",
	}
	gen := corpus.New(3)
	for i := range 200 {
		a := gen.Agent(i)
		if a.Card == nil {
			continue
		}
		texts = append(texts, a.Card.Description)
		for _, s := range a.Card.Skills {
			texts = append(texts, s.Name, s.Description)
			texts = append(texts, s.Examples...)
		}
	}
	checked := 0
	for _, text := range texts {
		all := an.Analyze([]byte(text))
		var vocab []string
		for _, tk := range all {
			vocab = append(vocab, string(tk.Term))
		}
		// Every word of the text, then each word alone, then absent words.
		sets := [][]string{vocab}
		for _, v := range vocab[:min(len(vocab), 6)] {
			sets = append(sets, []string{v})
		}
		sets = append(sets, []string{"zzz", "qq"})
		for _, terms := range sets {
			wordOf := map[string]int{}
			for i, term := range terms {
				if _, ok := wordOf[term]; !ok {
					wordOf[term] = i
				}
			}
			checkHighlighter(t, newHighlighter(runs, wordOf), an, text, wordOf)
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d checks", checked)
	}

	// And it skips what cannot match: ASCII runs without a word starting
	// with a term's first two letters are never analyzed, and a run
	// analyzed once is not analyzed again.
	counted := &countingAnalyzer{Analyzer: an}
	h := newHighlighter(newRunCache(counted), map[string]int{"invoic": 0})
	for range 3 {
		words := h.words(nil, "Reconciles payments; reads INVOICES and exports ledgers")
		if len(words) != 1 || words[0].start != 27 || counted.calls != 1 {
			t.Fatalf("found %v, analyzed %d runs: want the one run holding INVOICES, analyzed once", words, counted.calls)
		}
	}
}

// checkHighlighter fails unless h finds in text exactly the words the
// analyzer finds there whose terms wordOf holds, with their query words
// and byte ranges, and returns how many it found.
func checkHighlighter(t *testing.T, h *highlighter, an analysis.Analyzer, text string, wordOf map[string]int) int {
	t.Helper()
	var want []hlWord
	for _, tk := range an.Analyze([]byte(text)) {
		if w, ok := wordOf[string(tk.Term)]; ok {
			want = append(want, hlWord{word: w, start: tk.Start, end: tk.End})
		}
	}
	got := h.words(nil, text)
	if !slices.Equal(got, want) {
		t.Fatalf("text %q, terms %v:\n got %v\nwant %v", text, wordOf, got, want)
	}
	return len(got)
}

// The runs a query's words can match are never skipped, whatever form the
// word has in the text: accented, hyphenated, camelCase or snake_case,
// stemmed, possessive, or a synonym of the query's word.
func TestHighlighterKeepsEveryFormOfAWord(t *testing.T) {
	x := openTest(t, newMemSource())
	for _, c := range []struct {
		q, text string
		marks   int // words of text the query's terms match
	}{
		{"cafe", "Best Café in town; CAFÉ au lait and cafés", 3},
		{"resume", "Résumé screening: parse RÉSUMÉS", 2},
		{"naive", "a naïve Bayes classifier", 1},
		{"sentiment analysis", "sentiment-analysis of reviews (Sentiment-Analyses)", 4},
		{"analyze sentiment", "Run sentiment-analysis and analytics", 3},
		{"sql", "PostgreSQL, MySQL and text_to_sql agents", 3},
		{"parser", "PDFParser and HTMLParser", 2},
		{"gpt", "gpt4 and GPT-4o", 2},
		{"reconcile", "Reconciles, reconciling and reconciled ledgers", 3},
		{"connection", "connections connected connecting", 3},
		{"invoice", "Invoice's totals; invoices, bills and a BILL", 4},
		{"kubernetes", "deploys to k8s and Kubernetes", 2},
		{"leaked credentials", "finds exposed secrets and leaked passwords", 4},
	} {
		ws := x.searchWords(c.q)
		wordOf := map[string]int{}
		for i, w := range ws {
			for _, term := range slices.Concat(w.terms, w.syns) {
				if _, ok := wordOf[term]; !ok {
					wordOf[term] = i
				}
			}
		}
		for range 2 { // analyzed, then from the cache
			if n := checkHighlighter(t, newHighlighter(x.runs, wordOf), x.analyzer, c.text, wordOf); n != c.marks {
				t.Fatalf("%q in %q: %d words marked, want %d", c.q, c.text, n, c.marks)
			}
		}
	}
}

// The run cache stays within its bound however many distinct runs it sees,
// and what it answers after emptying a full shard is still the analysis.
func TestRunCacheIsBounded(t *testing.T) {
	an := newMapping().AnalyzerNamed(analyzerText)
	c := newRunCache(an)
	const limit = runShards * maxShardRuns
	for i := range 1000 { // far from filling any shard: all kept
		c.words(fmt.Sprintf("word%dx", i))
	}
	if n := c.size(); n != 1000 {
		t.Fatalf("%d runs cached after 1000 distinct ones", n)
	}
	for i := range 3 * limit {
		c.words(fmt.Sprintf("word%dx", i))
	}
	// Each shard is emptied when full, so it holds between none and
	// maxShardRuns runs: about half the bound on the whole.
	if n := c.size(); n > limit || n < limit/4 {
		t.Fatalf("%d runs cached after %d distinct ones, bound %d", n, 3*limit, limit)
	}
	for _, run := range []string{"word7x", "Reconciling", "Café", strings.Repeat("long", maxCachedRun)} {
		var want []runWord
		for _, tk := range an.Analyze([]byte(run)) {
			want = append(want, runWord{term: string(tk.Term), start: int32(tk.Start), end: int32(tk.End)})
		}
		for range 2 {
			if got := c.words(run); !slices.Equal(got, want) {
				t.Fatalf("%q: got %v, want %v", run, got, want)
			}
		}
	}
	if n := c.size(); n > limit {
		t.Fatalf("%d runs cached, bound %d", n, limit)
	}
}

type countingAnalyzer struct {
	analysis.Analyzer
	calls int
}

func (c *countingAnalyzer) Analyze(b []byte) analysis.TokenStream {
	c.calls++
	return c.Analyzer.Analyze(b)
}
