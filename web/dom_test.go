package web_test

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// doc is a parsed page queried by a small CSS selector subset: tag,
// #id, .class, [attr], [attr=value] (compound), joined by descendant
// spaces. Enough to assert on pages by selector (CONTRIBUTING.md).
type doc struct {
	t    testing.TB
	root *html.Node
}

func parse(t testing.TB, r response) doc {
	t.Helper()
	n, err := html.Parse(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	return doc{t, n}
}

type simple struct {
	tag, id string
	classes []string
	attrs   [][2]string // name, value ("\x00" = any)
}

func compile(sel string) []simple {
	var out []simple
	for _, part := range strings.Fields(sel) {
		var s simple
		for part != "" {
			i := strings.IndexAny(part[1:], ".#[") + 1
			if i == 0 {
				i = len(part)
			}
			tok := part[:i]
			if tok[0] == '[' {
				j := strings.IndexByte(part, ']')
				tok, i = part[:j+1], j+1
			}
			part = part[i:]
			switch tok[0] {
			case '#':
				s.id = tok[1:]
			case '.':
				s.classes = append(s.classes, tok[1:])
			case '[':
				kv := strings.SplitN(strings.Trim(tok, "[]"), "=", 2)
				v := "\x00"
				if len(kv) == 2 {
					v = strings.Trim(kv[1], `"'`)
				}
				s.attrs = append(s.attrs, [2]string{kv[0], v})
			default:
				s.tag = tok
			}
		}
		out = append(out, s)
	}
	return out
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

func (s simple) match(n *html.Node) bool {
	if n.Type != html.ElementNode || (s.tag != "" && n.Data != s.tag) {
		return false
	}
	if s.id != "" {
		if v, _ := attr(n, "id"); v != s.id {
			return false
		}
	}
	cls := strings.Fields(func() string { v, _ := attr(n, "class"); return v }())
	for _, c := range s.classes {
		found := false
		for _, have := range cls {
			found = found || have == c
		}
		if !found {
			return false
		}
	}
	for _, a := range s.attrs {
		v, ok := attr(n, a[0])
		if !ok || (a[1] != "\x00" && v != a[1]) {
			return false
		}
	}
	return true
}

// all returns the nodes matching sel under n, in document order.
func all(n *html.Node, sel string) []*html.Node {
	chain := compile(sel)
	var out []*html.Node
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			d := depth
			if d < len(chain)-1 && chain[d].match(c) {
				d++
			} else if d == len(chain)-1 && chain[d].match(c) {
				out = append(out, c)
			}
			walk(c, d)
		}
	}
	walk(n, 0)
	return out
}

func (d doc) all(sel string) []*html.Node { return all(d.root, sel) }

func (d doc) one(sel string) *html.Node {
	d.t.Helper()
	ns := d.all(sel)
	if len(ns) == 0 {
		d.t.Fatalf("no element matches %q", sel)
	}
	return ns[0]
}

func (d doc) count(sel string) int { return len(d.all(sel)) }

func (d doc) text(sel string) string { d.t.Helper(); return text(d.one(sel)) }

// text is the node's text content with whitespace collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		block := n.Type == html.ElementNode && !inline[n.Data]
		if block {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteByte(' ')
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func texts(ns []*html.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = text(n)
	}
	return out
}

// inline elements do not separate words; every other element does.
var inline = map[string]bool{"a": true, "span": true, "bdi": true, "code": true, "strong": true, "em": true,
	"mark": true, "q": true, "time": true, "del": true, "ins": true, "b": true, "i": true, "label": true}
