// Package strictjson parses JSON text into an ordered tree and rejects
// everything a lenient decoder would silently repair.
//
// Agent cards are signed over their canonical JSON form, stored byte for byte
// and shown to people. encoding/json keeps the last of duplicate keys, turns
// invalid UTF-8 and lone surrogates into U+FFFD and ignores trailing data
// (docs/threats.md C.29–C.31, E.55, E.60): a card decoded that way could verify
// one value and display another. Every consumer in Cardex (model, verifier,
// store) works from the one tree this package builds from the fetched bytes.
package strictjson

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits bound the work a hostile document can cause.
type Limits struct {
	MaxBytes int // input size; 0 means no limit
	MaxDepth int // nesting of arrays and objects; the top level is depth 1
}

// DefaultLimits are the card limits of docs/security.md "Network policy" and issue #2.
var DefaultLimits = Limits{MaxBytes: 512 << 10, MaxDepth: 64}

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one node of the tree. Only the field that matches Kind is set.
type Value struct {
	Kind   Kind
	Bool   bool
	Number string // the literal as written; valid JSON grammar, finite as a float64
	String string
	Array  []*Value
	Object []Member // in document order; keys are unique
	Offset int      // byte offset of the value's first byte in the input
}

// Member is one key/value pair of an object.
type Member struct {
	Key       string
	KeyOffset int
	Value     *Value
}

// Get returns the member named key of an object, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i := range v.Object {
		if v.Object[i].Key == key {
			return v.Object[i].Value
		}
	}
	return nil
}

// Float returns a number's value as a float64 (the IEEE rounding RFC 8785 uses).
func (v *Value) Float() (float64, bool) {
	if v == nil || v.Kind != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.Number, 64)
	return f, err == nil
}

// Error codes, stable for callers that map them to problems.
const (
	CodeEmpty        = "empty"
	CodeTooLarge     = "too_large"
	CodeBOM          = "bom"
	CodeInvalidUTF8  = "invalid_utf8"
	CodeLoneSurrog   = "lone_surrogate"
	CodeSyntax       = "syntax"
	CodeTrailingData = "trailing_data"
	CodeDuplicateKey = "duplicate_key"
	CodeTooDeep      = "too_deep"
	CodeNumberRange  = "number_out_of_range"
)

// Error describes why a document was rejected and where.
type Error struct {
	Code    string
	Offset  int    // byte offset in the input
	Pointer string // RFC 6901 pointer of the value being read
	Msg     string
}

func (e *Error) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("%s at byte %d (%s)", e.Msg, e.Offset, e.Pointer)
	}
	return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset)
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Parse parses data under DefaultLimits.
func Parse(data []byte) (*Value, error) { return ParseWithLimits(data, DefaultLimits) }

// ParseWithLimits parses exactly one JSON value (surrounded by optional
// whitespace) and rejects anything else.
func ParseWithLimits(data []byte, lim Limits) (*Value, error) {
	p := &parser{data: data, lim: lim}
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return nil, &Error{Code: CodeTooLarge, Offset: lim.MaxBytes, Msg: fmt.Sprintf("document is larger than %d bytes", lim.MaxBytes)}
	}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return nil, p.fail(CodeBOM, 0, "document starts with a byte order mark")
	}
	p.skipSpace()
	if p.pos == len(data) {
		return nil, p.fail(CodeEmpty, p.pos, "document is empty")
	}
	v, err := p.value(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(data) {
		return nil, p.fail(CodeTrailingData, p.pos, "unexpected data after the JSON value")
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
	lim  Limits
	path []string
}

func (p *parser) fail(code string, off int, msg string) *Error {
	return &Error{Code: code, Offset: off, Pointer: p.pointer(), Msg: msg}
}

func (p *parser) pointer() string {
	if len(p.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range p.path {
		b.WriteByte('/')
		b.WriteString(EscapePointerToken(t))
	}
	return b.String()
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Value, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail(CodeSyntax, p.pos, "unexpected end of input")
	}
	start := p.pos
	switch c := p.data[p.pos]; {
	case c == '{':
		if p.lim.MaxDepth > 0 && depth > p.lim.MaxDepth {
			return nil, p.fail(CodeTooDeep, start, fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth))
		}
		return p.object(depth)
	case c == '[':
		if p.lim.MaxDepth > 0 && depth > p.lim.MaxDepth {
			return nil, p.fail(CodeTooDeep, start, fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth))
		}
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, String: s, Offset: start}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", &Value{Kind: Bool, Bool: true, Offset: start})
	case c == 'f':
		return p.literal("false", &Value{Kind: Bool, Offset: start})
	case c == 'n':
		return p.literal("null", &Value{Kind: Null, Offset: start})
	default:
		return nil, p.fail(CodeSyntax, start, fmt.Sprintf("invalid character %s looking for a value", quoteByte(c)))
	}
}

func (p *parser) literal(word string, v *Value) (*Value, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, p.fail(CodeSyntax, p.pos, "invalid literal (expected "+word+")")
	}
	p.pos += len(word)
	return v, nil
}

func (p *parser) object(depth int) (*Value, error) {
	v := &Value{Kind: Object, Offset: p.pos}
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	var seen map[string]struct{}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(CodeSyntax, p.pos, "unexpected end of input in object")
		}
		if p.data[p.pos] != '"' {
			return nil, p.fail(CodeSyntax, p.pos, fmt.Sprintf("invalid character %s looking for an object key", quoteByte(p.data[p.pos])))
		}
		keyOff := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if len(v.Object) >= 8 && seen == nil {
			seen = make(map[string]struct{}, 16)
			for _, m := range v.Object {
				seen[m.Key] = struct{}{}
			}
		}
		dup := false
		if seen != nil {
			_, dup = seen[key]
			seen[key] = struct{}{}
		} else {
			for _, m := range v.Object {
				if m.Key == key {
					dup = true
					break
				}
			}
		}
		if dup {
			p.path = append(p.path, key)
			e := p.fail(CodeDuplicateKey, keyOff, fmt.Sprintf("duplicate key %q", key))
			p.path = p.path[:len(p.path)-1]
			return nil, e
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail(CodeSyntax, p.pos, "expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		p.path = append(p.path, key)
		child, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		v.Object = append(v.Object, Member{Key: key, KeyOffset: keyOff, Value: child})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(CodeSyntax, p.pos, "unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return nil, p.fail(CodeSyntax, p.pos, fmt.Sprintf("invalid character %s after object member", quoteByte(p.data[p.pos])))
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	v := &Value{Kind: Array, Offset: p.pos}
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		p.path = append(p.path, strconv.Itoa(len(v.Array)))
		child, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		v.Array = append(v.Array, child)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(CodeSyntax, p.pos, "unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return nil, p.fail(CodeSyntax, p.pos, fmt.Sprintf("invalid character %s after array element", quoteByte(p.data[p.pos])))
		}
	}
}

func (p *parser) number() (*Value, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return nil, p.fail(CodeSyntax, i, "invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, p.fail(CodeSyntax, i, "invalid number: digit expected after '.'")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, p.fail(CodeSyntax, i, "invalid number: digit expected in exponent")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	lit := string(d[start:i])
	// RFC 8785 works on IEEE 754 doubles: a literal that overflows to
	// infinity has no canonical form (docs/threats.md E.55).
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && (math.IsInf(f, 0) || !errors.Is(err, strconv.ErrRange)) {
		return nil, p.fail(CodeNumberRange, start, "number "+truncate(lit, 32)+" is out of range")
	}
	p.pos = i
	return &Value{Kind: Number, Number: lit, Offset: start}, nil
}

// str reads a string starting at the opening quote.
func (p *parser) str() (string, error) {
	d := p.data
	i := p.pos + 1
	// Fast path: no escapes.
	j := i
	for j < len(d) {
		c := d[j]
		if c == '"' {
			if !utf8.Valid(d[i:j]) {
				return "", p.badUTF8(i, j)
			}
			p.pos = j + 1
			return string(d[i:j]), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		j++
	}
	var b []byte
	b = append(b, d[i:j]...)
	if !utf8.Valid(b) {
		return "", p.badUTF8(i, j)
	}
	i = j
	for {
		if i >= len(d) {
			return "", p.fail(CodeSyntax, i, "unterminated string")
		}
		c := d[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return string(b), nil
		case c < 0x20:
			return "", p.fail(CodeSyntax, i, "control character in string")
		case c == '\\':
			if i+1 >= len(d) {
				return "", p.fail(CodeSyntax, i, "unterminated escape")
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i += 2
			case 'b':
				b = append(b, '\b')
				i += 2
			case 'f':
				b = append(b, '\f')
				i += 2
			case 'n':
				b = append(b, '\n')
				i += 2
			case 'r':
				b = append(b, '\r')
				i += 2
			case 't':
				b = append(b, '\t')
				i += 2
			case 'u':
				r, ok := hex4(d, i+2)
				if !ok {
					return "", p.fail(CodeSyntax, i, "invalid \\u escape")
				}
				n := i + 6
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 {
						return "", p.fail(CodeLoneSurrog, i, "lone low surrogate in string")
					}
					if n+1 >= len(d) || d[n] != '\\' || d[n+1] != 'u' {
						return "", p.fail(CodeLoneSurrog, i, "lone high surrogate in string")
					}
					r2, ok := hex4(d, n+2)
					if !ok {
						return "", p.fail(CodeSyntax, n, "invalid \\u escape")
					}
					if r2 < 0xDC00 || r2 > 0xDFFF {
						return "", p.fail(CodeLoneSurrog, i, "lone high surrogate in string")
					}
					r = utf16.DecodeRune(r, r2)
					n += 6
				}
				b = utf8.AppendRune(b, r)
				i = n
			default:
				return "", p.fail(CodeSyntax, i, "invalid escape \\"+string(rune(e)))
			}
		default:
			// Copy a run of plain bytes, checking UTF-8 as we go.
			k := i
			for k < len(d) && d[k] != '"' && d[k] != '\\' && d[k] >= 0x20 {
				k++
			}
			if !utf8.Valid(d[i:k]) {
				return "", p.badUTF8(i, k)
			}
			b = append(b, d[i:k]...)
			i = k
		}
	}
}

func (p *parser) badUTF8(from, to int) *Error {
	off := from
	for off < to {
		r, size := utf8.DecodeRune(p.data[off:to])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	return p.fail(CodeInvalidUTF8, off, "invalid UTF-8 in string")
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// EscapePointerToken escapes one RFC 6901 reference token.
func EscapePointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Pointer joins reference tokens into an RFC 6901 JSON pointer.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(EscapePointerToken(t))
	}
	return b.String()
}
