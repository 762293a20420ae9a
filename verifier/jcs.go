package verifier

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cardexhq/cardex/strictjson"
)

// appendJCS writes v in RFC 8785 form straight from the tree: members sorted
// by UTF-16 code units (§3.2.3), numbers in their ECMAScript form (§3.2.2.3),
// strings with the minimal escaping strictjson already uses (§3.2.2.2).
//
// It exists for speed: going through text and github.com/gowebpki/jcs
// (Transform of strictjson.Marshal) costs about half of a card verification.
// jcs.Transform stays the reference: the tests and FuzzCanonicalize check
// that both produce identical bytes on every vector, card and fuzz input.
func appendJCS(dst []byte, v *strictjson.Value) []byte {
	switch v.Kind {
	case strictjson.Number:
		f, _ := v.Float() // strictjson only yields finite literals
		return appendES6Number(dst, f)
	case strictjson.Array:
		dst = append(dst, '[')
		for i, e := range v.Array {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJCS(dst, e)
		}
		return append(dst, ']')
	case strictjson.Object:
		members := v.Object
		if !slices.IsSortedFunc(members, compareMembersUTF16) {
			members = slices.Clone(members)
			slices.SortFunc(members, compareMembersUTF16)
		}
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strictjson.AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = appendJCS(dst, m.Value)
		}
		return append(dst, '}')
	}
	return v.AppendJSON(dst) // null, booleans, strings
}

func compareMembersUTF16(a, b strictjson.Member) int { return compareUTF16(a.Key, b.Key) }

// compareUTF16 orders strings by their UTF-16 code units (docs/threats.md
// E.58: U+1F600 sorts before U+FB33 because its high surrogate is 0xD83D).
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb) // same high surrogate: low surrogates order as the runes
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	return 0xD800 + (r-0x10000)>>10
}

// appendES6Number writes f as ECMAScript Number.prototype.toString does:
// the shortest round-trip digits, positional for exponents in [-6, 21),
// otherwise d.ddde±x; -0 is 0.
func appendES6Number(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	mant, expStr, _ := strings.Cut(string(e), "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k, n := len(digits), exp+1 // value = 0.DIGITS × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, "0."...)
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
