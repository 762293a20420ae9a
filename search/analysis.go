package search

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
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

// runCache memoizes the text analyzer over runs of text between ASCII
// white space. A Unicode word never spans ASCII white space, so a run
// analyzed alone gives the words it gives in its whole text, at the same
// byte offsets from the run's start; and a store's texts repeat their
// words, so after a few queries the page's highlights are map lookups
// instead of the tokenizer, the filters and the stemmer. The runs of a
// text field are a vocabulary, not a stream, but it is unbounded: the
// cache is split into runShards maps of at most maxShardRuns runs each,
// and a full map is emptied before it takes another (what is dropped is
// only work to redo). Runs longer than maxCachedRun are analyzed every
// time.
type runCache struct {
	an     analysis.Analyzer
	seed   maphash.Seed
	shards [runShards]runShard
}

const (
	runShards    = 64
	maxShardRuns = 1024
	maxCachedRun = 64
)

type runShard struct {
	mu   sync.RWMutex
	runs map[string][]runWord
}

// runWord is one word of a run: its term and byte range in the run.
type runWord struct {
	term       string
	start, end int32
}

func newRunCache(an analysis.Analyzer) *runCache {
	c := &runCache{an: an, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].runs = map[string][]runWord{}
	}
	return c
}

// words returns the words of run as the analyzer gives them. The result is
// shared: callers must not change it.
func (c *runCache) words(run string) []runWord {
	if len(run) > maxCachedRun {
		return c.analyze(run)
	}
	sh := &c.shards[maphash.String(c.seed, run)%runShards]
	sh.mu.RLock()
	ws, ok := sh.runs[run]
	sh.mu.RUnlock()
	if ok {
		return ws
	}
	ws = c.analyze(run)
	sh.mu.Lock()
	if len(sh.runs) >= maxShardRuns {
		clear(sh.runs)
	}
	sh.runs[strings.Clone(run)] = ws
	sh.mu.Unlock()
	return ws
}

func (c *runCache) analyze(run string) []runWord {
	toks := c.an.Analyze([]byte(run))
	ws := make([]runWord, len(toks))
	for i, tk := range toks {
		ws[i] = runWord{term: string(tk.Term), start: int32(tk.Start), end: int32(tk.End)}
	}
	return ws
}

// size is how many runs the cache holds.
func (c *runCache) size() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		n += len(sh.runs)
		sh.mu.RUnlock()
	}
	return n
}

// highlighter finds the words of a text that analyze to one of a query's
// terms, as the text analyzer does, doing as little of the analysis as it
// can: whole ASCII runs between spaces that cannot hold such a word are
// skipped, and the others are analyzed through the runCache.
type highlighter struct {
	runs     *runCache
	wordOf   map[string]int // query term → its query word
	prefixes [][]byte       // the first two bytes of each term
	first    [256]bool      // the bytes a prefix starts with, either case
	// marks is the spare room of the page's marks (textSeg.detail): the
	// hits of a page share one array instead of each growing its own.
	marks []mark
}

// hlWord is a word of a text that is a query term: its query word and its
// byte range in the text.
type hlWord struct {
	word       int
	start, end int
}

func newHighlighter(runs *runCache, wordOf map[string]int) *highlighter {
	h := &highlighter{runs: runs, wordOf: wordOf}
	for t := range wordOf {
		p := []byte(t[:min(2, len(t))])
		if !slices.ContainsFunc(h.prefixes, func(q []byte) bool { return string(q) == string(p) }) {
			h.prefixes = append(h.prefixes, p)
		}
		switch {
		case len(p) == 0: // any word start
			for c := range h.first {
				h.first[c] = true
			}
		case isLowerASCII(p[0]):
			h.first[p[0]-'a'+'A'] = true
			fallthrough
		default:
			h.first[p[0]] = true
		}
	}
	return h
}

// words appends to dst the words of text whose terms are the query's.
func (h *highlighter) words(dst []hlWord, text string) []hlWord {
	for i := 0; i < len(text); {
		if isSpace(text[i]) {
			i++
			continue
		}
		j := i
		ascii := true
		for j < len(text) && !isSpace(text[j]) {
			if text[j] >= utf8.RuneSelf {
				ascii = false
			}
			j++
		}
		if !ascii || h.mayHold(text[i:j]) {
			for _, w := range h.runs.words(text[i:j]) {
				if q, ok := h.wordOf[w.term]; ok {
					dst = append(dst, hlWord{word: q, start: i + int(w.start), end: i + int(w.end)})
				}
			}
		}
		i = j
	}
	return dst
}

// isSpace is ASCII white space: a word boundary on both sides.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// mayHold reports whether an ASCII run could hold a word analyzing to a
// query term: a word or word part (wordParts) starting where a term's
// first two bytes are, lowercased. Porter stemming rewrites only the ends
// of words and never the first two letters (a word of two letters or fewer
// is left as it is), so a word whose first two bytes differ from every
// term's is never one of them; TestPorterKeepsTwoLetters pins that on the
// corpus vocabulary.
func (h *highlighter) mayHold(run string) bool {
	for i := 0; i < len(run); i++ {
		if !h.first[run[i]] || !wordStart(run, i) {
			continue
		}
		for _, p := range h.prefixes {
			if i+len(p) <= len(run) && lowerEq(run[i:i+len(p)], p) {
				return true
			}
		}
	}
	return false
}

// wordStart reports whether a word, or a part of a compound word, can
// start at byte i of an ASCII run: after a byte that is not a letter or
// digit, at an underscore's end, at a lower-to-upper or letter–digit
// change, or at the capital that starts a word after capitals
// ("PDFParser").
func wordStart(run string, i int) bool {
	if i == 0 {
		return true
	}
	c, prev := run[i], run[i-1]
	switch {
	case !isAlnum(c):
		return false
	case !isAlnum(prev):
		return true
	case isLowerASCII(prev) && isUpperASCII(c), isDigitASCII(prev) != isDigitASCII(c):
		return true
	case isUpperASCII(prev) && isUpperASCII(c) && i+1 < len(run) && isLowerASCII(run[i+1]):
		return true
	}
	return false
}

func isLowerASCII(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigitASCII(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isLowerASCII(c) || isUpperASCII(c) || isDigitASCII(c) }

func lowerEq(s string, p []byte) bool {
	for k := range p {
		c := s[k]
		if isUpperASCII(c) {
			c += 'a' - 'A'
		}
		if c != p[k] {
			return false
		}
	}
	return true
}
