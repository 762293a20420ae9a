package fetch

import (
	"bytes"
	"mime"
	"strings"
)

// CheckJSON tells a body that cannot be a JSON document (an HTML error page
// served with 200, an empty body, an image) from one worth parsing
// (docs/threats.md C.28). It returns a not_json *FetchError or nil. Whether the
// JSON is an object, and a card, is the parser's decision (not_a_card,
// invalid_card).
//
// Accepted media types: none at all, application/json, text/json,
// anything +json, and text/plain and application/octet-stream, which static
// hosts use for .json files.
func (r *Response) CheckJSON() error {
	fail := func(format string, args ...any) error {
		return &FetchError{Class: ClassNotJSON, HTTPStatus: r.StatusCode, Hop: r.URL, Err: wrapf(ErrNotJSON, format, args...)}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return fail("unparseable Content-Type %q", truncate(ct, 100))
		}
		if !jsonMediaType(mt) {
			return fail("Content-Type %s", mt)
		}
	}
	b := bytes.TrimLeft(r.Body, " \t\r\n")
	if len(b) == 0 {
		return fail("empty body")
	}
	switch c := b[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9'),
		bytes.HasPrefix(b, []byte("true")), bytes.HasPrefix(b, []byte("false")), bytes.HasPrefix(b, []byte("null")):
		return nil
	case c == '<':
		return fail("body is markup")
	default:
		return fail("body starts with byte 0x%02x", c)
	}
}

func jsonMediaType(mt string) bool {
	switch mt {
	case "application/json", "text/json", "text/plain", "application/octet-stream":
		return true
	}
	return strings.HasSuffix(mt, "+json")
}
