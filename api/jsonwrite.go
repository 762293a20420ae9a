package api

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The append helpers below write the bytes encoding/json's Marshal writes
// for the same values (HTML escaping on, as writeJSON has it), without
// reflection, for the records of a search page (writeSearchPage). The
// tests compare both encoders on every value they produce.

const hexDigits = "0123456789abcdef"

// jsonPlain marks the ASCII bytes written as they are inside a JSON string;
// every other one is escaped: quote and backslash, control bytes, and <, >
// and & so that text such as "</script>" stays inert (docs/threats.md C.37).
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = true
	}
	for _, b := range `"\<>&` {
		t[b] = false
	}
	return t
}()

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD; U+2028 and U+2029 are escaped (JavaScript line terminators).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	from := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if jsonPlain[b] {
				i++
				continue
			}
			dst = append(dst, s[from:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			from = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[from:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[from:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		from = i
	}
	dst = append(dst, s[from:]...)
	return append(dst, '"')
}

// appendJSONKey appends ,"key": (or "key": first in an object); key is a
// plain ASCII member name.
func appendJSONKey(dst []byte, key string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendJSONTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// the nanoseconds it has). Records hold UTC times of years 0–9999, which
// MarshalJSON accepts.
func appendJSONTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendJSONTimePtr appends t, or null when nil.
func appendJSONTimePtr(dst []byte, t *time.Time) []byte {
	if t == nil {
		return append(dst, "null"...)
	}
	return appendJSONTime(dst, *t)
}

func appendJSONBool(dst []byte, v bool) []byte {
	return strconv.AppendBool(dst, v)
}

func appendJSONInt(dst []byte, v int64) []byte {
	return strconv.AppendInt(dst, v, 10)
}

// appendJSONStrings appends a list of strings; nil is null, as Marshal
// writes a nil slice.
func appendJSONStrings(dst []byte, l []string) []byte {
	if l == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range l {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}
