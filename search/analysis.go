package search

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
)

// analyzerText is the analyzer of every text field and of the query: the
// English analyzer (possessives, lowercase, stop words, Porter stemming)
// with one more filter before lowercasing, splitFold:
//
//   - accents are folded ("Café" is indexed as "cafe", so "cafe" finds it);
//   - a camelCase, snake_case or letters-and-digits word is indexed whole
//     and also as its parts ("PostgreSQL" → postgresql, postgre, sql;
//     "text_to_sql" → text_to_sql, text, to, sql). Hyphenated words are
//     already split by the Unicode tokenizer ("sentiment-analysis").
//
// Byte offsets stay those of the original text, so highlights (highlight.go)
// mark the word as written.
const analyzerText = "cardex-text"

func init() {
	if err := registry.RegisterAnalyzer(analyzerText, newTextAnalyzer); err != nil {
		panic(err)
	}
}

func newTextAnalyzer(_ map[string]any, cache *registry.Cache) (analysis.Analyzer, error) {
	tok, err := cache.TokenizerNamed(unicodetok.Name)
	if err != nil {
		return nil, err
	}
	var filters []analysis.TokenFilter
	for _, name := range []string{en.PossessiveName, "", lowercase.Name, en.StopName, porter.Name} {
		if name == "" {
			filters = append(filters, splitFold{})
			continue
		}
		f, err := cache.TokenFilterNamed(name)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
	return &analysis.DefaultAnalyzer{Tokenizer: tok, TokenFilters: filters}, nil
}

// splitFold folds accents and adds the parts of compound words; see
// analyzerText. A part keeps the position of its word, so it neither
// shifts the positions phrase queries compare nor counts as a second word.
type splitFold struct{}

var folder = asciifolding.New()

func (splitFold) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(in))
	for _, t := range in {
		if t.Type != analysis.AlphaNumeric && t.Type != analysis.Ideographic && t.Type != analysis.Numeric {
			out = append(out, t)
			continue
		}
		orig := t.Term
		parts := wordParts(orig)
		t.Term = fold(orig)
		out = append(out, t)
		if len(parts) < 2 {
			continue
		}
		for _, p := range parts {
			out = append(out, &analysis.Token{
				Start:    t.Start + p[0],
				End:      t.Start + p[1],
				Term:     fold(append([]byte(nil), orig[p[0]:p[1]]...)),
				Position: t.Position,
				Type:     t.Type,
			})
		}
	}
	return out
}

// fold folds accents (ASCII folding) when the word has non-ASCII letters.
func fold(b []byte) []byte {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return folder.Filter(b)
		}
	}
	return b
}

// wordParts returns the byte ranges of the parts of a compound word:
// split at '_', at a lower→upper change ("camelCase"), at the end of an
// upper-case run before a capitalized word ("PDFParser" → PDF, Parser) and
// between letters and digits ("gpt4"). Fewer than two parts means the word
// is not compound.
func wordParts(w []byte) [][2]int {
	var out [][2]int
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, [2]int{start, end})
		}
		start = -1
	}
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRune(w[i:])
		switch {
		case r == '_':
			flush(i)
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev),
			unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev):
			// "PDFParser": the P of Parser starts the next part.
			pl := utf8.RuneLen(prev)
			flush(i - pl)
			start = i - pl
		}
		if r != '_' {
			prev = r
		} else {
			prev = 0
		}
		i += n
	}
	flush(len(w))
	return out
}

// stemGate drops the words that cannot stem to any of a set of terms, so
// the stemmer after it only runs on the few that can. Porter stemming
// rewrites only the ends of words and never the first two letters (a word
// of two letters or fewer is left as it is), so a word whose first two
// bytes differ from every term's is never one of them.
// TestPorterKeepsTwoLetters pins that property on the corpus vocabulary.
type stemGate struct{ prefixes [][]byte }

func (g stemGate) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := in[:0]
	for _, t := range in {
		for _, p := range g.prefixes {
			if len(t.Term) >= len(p) && string(t.Term[:len(p)]) == string(p) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// highlightAnalyzer is an (the text analyzer) with a stemGate for terms
// before its last filter, the stemmer: it finds the words of a text that
// analyze to one of terms, as an does, and skips stemming the rest.
func highlightAnalyzer(an analysis.Analyzer, terms []string) analysis.Analyzer {
	da, ok := an.(*analysis.DefaultAnalyzer)
	if !ok || len(da.TokenFilters) == 0 {
		return an
	}
	g := stemGate{}
	for _, t := range terms {
		p := []byte(t[:min(2, len(t))])
		if !slices.ContainsFunc(g.prefixes, func(q []byte) bool { return string(q) == string(p) }) {
			g.prefixes = append(g.prefixes, p)
		}
	}
	fs := slices.Clone(da.TokenFilters)
	stem := fs[len(fs)-1]
	fs = append(fs[:len(fs)-1], g, stem)
	return &analysis.DefaultAnalyzer{CharFilters: da.CharFilters, Tokenizer: da.Tokenizer, TokenFilters: fs}
}
