package strictjson

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendJSON appends v as compact JSON text: members in tree order, numbers
// as their original literals, strings with the minimal escaping of RFC 8785
// §3.2.2.2 (only '"', '\\' and control characters). The output parses back
// into an equal tree and is ready for an RFC 8785 transform.
func (v *Value) AppendJSON(dst []byte) []byte {
	switch v.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, v.Number...)
	case String:
		return AppendString(dst, v.String)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.Array {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.AppendJSON(dst)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i, m := range v.Object {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = m.Value.AppendJSON(dst)
		}
		return append(dst, '}')
	}
	return dst
}

// Marshal returns v as compact JSON text (see AppendJSON).
func Marshal(v *Value) []byte { return v.AppendJSON(nil) }

// AppendString appends s as a JSON string with RFC 8785 escaping. s must be
// valid UTF-8 (every string this package parses is).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Clone returns a deep copy of v.
func (v *Value) Clone() *Value {
	if v == nil {
		return nil
	}
	c := *v
	if v.Array != nil {
		c.Array = make([]*Value, len(v.Array))
		for i, e := range v.Array {
			c.Array[i] = e.Clone()
		}
	}
	if v.Object != nil {
		c.Object = make([]Member, len(v.Object))
		for i, m := range v.Object {
			c.Object[i] = Member{Key: m.Key, KeyOffset: m.KeyOffset, Value: m.Value.Clone()}
		}
	}
	return &c
}
