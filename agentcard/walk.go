package agentcard

import (
	"fmt"
	"strconv"

	sj "github.com/cardexhq/cardex/strictjson"
)

// maxProblems bounds the findings kept for one document: a hostile card with
// 100,000 flagged tags (docs/threats.md C.33) must not produce a response of
// the same size. What is dropped is counted in one final problem.
const maxProblems = 500

// collector gathers problems in document order of discovery.
type collector struct {
	list       []Problem
	dropped    int
	droppedErr bool
	hasErr     bool
}

func (c *collector) add(ptr string, sev Severity, code, msg string) {
	if sev == SeverityError {
		c.hasErr = true
	}
	if len(c.list) >= maxProblems {
		c.dropped++
		c.droppedErr = c.droppedErr || sev == SeverityError
		return
	}
	c.list = append(c.list, Problem{Pointer: ptr, Severity: sev, Code: code, Message: msg})
}

func (c *collector) warn(ptr, code, format string, args ...any) {
	c.add(ptr, SeverityWarning, code, fmt.Sprintf(format, args...))
}

func (c *collector) fail(ptr, code, format string, args ...any) {
	c.add(ptr, SeverityError, code, fmt.Sprintf(format, args...))
}

// problems returns the findings, with a last entry for the dropped ones.
func (c *collector) problems() []Problem {
	out := c.list
	if c.dropped > 0 {
		sev := SeverityWarning
		if c.droppedErr {
			sev = SeverityError
		}
		out = append(out, Problem{Severity: sev, Code: CodeTooManyProblems,
			Message: fmt.Sprintf("%d more problems not listed", c.dropped)})
	}
	if out == nil {
		out = []Problem{}
	}
	return out
}

// obj is one object of the card read against its schema: unknown members
// are ignored (they stay in the tree), known members of the wrong type are
// errors, nulls are warnings and read as absent.
type obj struct {
	v    *sj.Value
	ptr  string
	s    *schema
	vals []*sj.Value
	keys []string // the spelling each known field was written with
}

// open checks the members of v against s. A nil v gives an empty obj.
func (c *collector) open(v *sj.Value, ptr string, s *schema) obj {
	o := obj{v: v, ptr: ptr, s: s}
	if v == nil || v.Kind != sj.Object {
		return o
	}
	o.vals = make([]*sj.Value, len(s.fields))
	o.keys = make([]string, len(s.fields))
	for _, m := range v.Object {
		i, ok := s.lookup(m.Key)
		if !ok {
			// docs/threats.md C.30: a key that matches a model field only
			// case-insensitively is what a lenient decoder would read as
			// that field while the signed bytes say otherwise.
			if f, bad := s.caseVariant(m.Key); bad {
				c.fail(memberPtr(ptr, m.Key), CodeCaseVariantKey, "key %q differs only in case from the field %q", m.Key, f)
			}
			continue
		}
		f := s.fields[i]
		if o.keys[i] != "" {
			c.fail(memberPtr(ptr, m.Key), CodeDuplicateField, "%q and %q are the same field", o.keys[i], m.Key)
			continue
		}
		o.keys[i] = m.Key
		if m.Value.Kind == sj.Null {
			c.warn(memberPtr(ptr, m.Key), CodeNullValue, "%s is null; read as absent", m.Key)
			continue
		}
		// A member of the wrong JSON type is dropped with a warning, and so
		// is an array element of the wrong type (the rest of the array is
		// read): one bad optional member must not reject an otherwise
		// good card (docs/lint.md). A card that loses its name or every
		// endpoint this way is refused by Parse.
		if f.kind != anyKind && m.Value.Kind != f.kind {
			c.warn(memberPtr(ptr, m.Key), CodeWrongType, "%s must be %s %s, not %s; ignored", m.Key, article(f.kind), f.kind, m.Value.Kind)
			continue
		}
		if f.kind == sj.Array && f.elem != anyKind {
			for j, e := range m.Value.Array {
				if e.Kind != f.elem {
					c.warn(memberPtr(ptr, m.Key)+"/"+strconv.Itoa(j), CodeWrongType, "%s[%d] must be %s %s, not %s; ignored", m.Key, j, article(f.elem), f.elem, e.Kind)
				}
			}
		}
		o.vals[i] = m.Value
	}
	return o
}

// get returns the value of a known field, or nil when absent, null or of
// the wrong type, and the pointer of the field as written (camelCase when
// absent).
func (o obj) get(name string) (*sj.Value, string) {
	i := o.s.index(name)
	key := name
	if o.keys != nil && o.keys[i] != "" {
		key = o.keys[i]
	}
	ptr := o.ptr + "/" + key
	if o.vals == nil {
		return nil, ptr
	}
	return o.vals[i], ptr
}

// has reports whether the field was written at all (even null or mistyped).
func (o obj) has(name string) bool {
	return o.keys != nil && o.keys[o.s.index(name)] != ""
}

func (o obj) str(name string) string {
	v, _ := o.get(name)
	if v == nil {
		return ""
	}
	return v.String
}

func (o obj) boolean(name string) bool {
	v, _ := o.get(name)
	return v != nil && v.Bool
}

// strings returns a string array field as a non-nil slice.
func (o obj) strings(name string) []string {
	v, _ := o.get(name)
	if v == nil {
		return []string{}
	}
	out := make([]string, 0, len(v.Array))
	for _, e := range v.Array {
		if e.Kind == sj.String {
			out = append(out, e.String)
		}
	}
	return out
}

func article(k sj.Kind) string {
	switch k {
	case sj.Array, sj.Object:
		return "an"
	}
	return "a"
}

func memberPtr(ptr, key string) string { return ptr + "/" + sj.EscapePointerToken(key) }

func itemPtr(ptr string, i int) string { return ptr + "/" + strconv.Itoa(i) }
