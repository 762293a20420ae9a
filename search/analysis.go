package search

import (
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
