package verifier

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/cardexhq/cardex/strictjson"
)

// appendPython writes v the way a2a-python before PR #1193 serialized the
// signing payload: json.dumps(obj, sort_keys=True, separators=(',', ':'))
// with the default ensure_ascii=True (docs/verification.md). Members are sorted
// by code point (not UTF-16 units, docs/threats.md E.58), non-ASCII is written
// as lowercase \uXXXX with surrogate pairs for astral characters, and numbers
// use Python's float repr because the proto Struct hands every number to
// Python as a float (100 → 100.0, 0.000001 → 1e-06).
func appendPython(dst []byte, v *strictjson.Value) []byte {
	switch v.Kind {
	case strictjson.Null:
		return append(dst, "null"...)
	case strictjson.Bool:
		if v.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case strictjson.Number:
		f, _ := v.Float() // strictjson only yields finite literals
		return appendPythonFloat(dst, f)
	case strictjson.String:
		return appendPythonString(dst, v.String)
	case strictjson.Array:
		dst = append(dst, '[')
		for i, e := range v.Array {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendPython(dst, e)
		}
		return append(dst, ']')
	case strictjson.Object:
		members := slices.Clone(v.Object)
		// Go compares strings bytewise; for UTF-8 that is code point order,
		// which is what Python's sorted() does on str keys.
		slices.SortFunc(members, func(a, b strictjson.Member) int { return strings.Compare(a.Key, b.Key) })
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendPythonString(dst, m.Key)
			dst = append(dst, ':')
			dst = appendPython(dst, m.Value)
		}
		return append(dst, '}')
	}
	return dst
}

// appendPythonFloat writes repr(float(f)): the shortest round-trip digits, in
// positional form when the decimal exponent is in (-4, 16], else as d.ddde±XX.
// -0 is written 0.0: the reference emulation (interop/canon_python_emulated)
// built its dict through the ProtoJSON writer of a2a-js, which prints -0 as 0.
func appendPythonFloat(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±XX
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1 // value = 0.DIGITS × 10^decpt
	switch {
	case decpt > -4 && decpt <= 16:
		switch {
		case decpt <= 0:
			dst = append(dst, "0."...)
			dst = append(dst, strings.Repeat("0", -decpt)...)
			dst = append(dst, digits...)
		case decpt >= len(digits):
			dst = append(dst, digits...)
			dst = append(dst, strings.Repeat("0", decpt-len(digits))...)
			dst = append(dst, ".0"...)
		default:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			dst = append(dst, digits[decpt:]...)
		}
		return dst
	default:
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
}

// appendPythonString is json.dumps's ensure_ascii string encoder: only
// printable ASCII (0x20–0x7e) is written literally.
func appendPythonString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r >= 0x20 && r < 0x7f:
			dst = append(dst, byte(r))
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			dst = appendU(appendU(dst, hi), lo)
		default:
			dst = appendU(dst, r)
		}
	}
	return append(dst, '"')
}

func appendU(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
}
