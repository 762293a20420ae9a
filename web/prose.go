package web

import "strings"

// prose is a description from openapi.yaml, written in the small part of
// Markdown the document uses (paragraphs, "- " lists, `code`, **strong**),
// as blocks the template renders element by element. Nothing here is
// trusted markup: every span is text that html/template escapes, so the
// page needs no trusted template type (docs/threats.md H.74).
type prose []proseBlock

// proseBlock is a paragraph (one item) or a bulleted list (each item one
// entry).
type proseBlock struct {
	List  bool
	Items []proseLine
}

type proseLine []proseSpan

// proseSpan is a run of text, shown as code or strong when marked so.
type proseSpan struct {
	Text         string
	Code, Strong bool
}

// parseProse splits s into paragraphs at blank lines; a paragraph whose
// lines all start with "- " is a list, and a continuation line (indented,
// not starting with "- ") joins the item before it.
func parseProse(s string) prose {
	var out prose
	for _, para := range strings.Split(strings.ReplaceAll(strings.TrimSpace(s), "\r\n", "\n"), "\n\n") {
		lines := strings.Split(strings.TrimSpace(para), "\n")
		if lines[0] == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(lines[0]), "- ") {
			b := proseBlock{List: true}
			var item []string
			flush := func() {
				if len(item) > 0 {
					b.Items = append(b.Items, parseSpans(strings.Join(item, " ")))
					item = nil
				}
			}
			for _, l := range lines {
				t := strings.TrimSpace(l)
				if rest, ok := strings.CutPrefix(t, "- "); ok {
					flush()
					item = append(item, rest)
				} else {
					item = append(item, t)
				}
			}
			flush()
			out = append(out, b)
			continue
		}
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		out = append(out, proseBlock{Items: []proseLine{parseSpans(strings.Join(lines, " "))}})
	}
	return out
}

// parseSpans splits a line at `code` and **strong** marks; an unclosed
// mark is text.
func parseSpans(s string) proseLine {
	var out proseLine
	text := func(t string) {
		if t == "" {
			return
		}
		if n := len(out); n > 0 && !out[n-1].Code && !out[n-1].Strong {
			out[n-1].Text += t
			return
		}
		out = append(out, proseSpan{Text: t})
	}
	for s != "" {
		i := strings.IndexAny(s, "`*")
		if i < 0 {
			text(s)
			break
		}
		text(s[:i])
		s = s[i:]
		switch {
		case s[0] == '`':
			if j := strings.IndexByte(s[1:], '`'); j >= 0 {
				out = append(out, proseSpan{Text: s[1 : 1+j], Code: true})
				s = s[2+j:]
				continue
			}
		case strings.HasPrefix(s, "**"):
			if j := strings.Index(s[2:], "**"); j > 0 {
				out = append(out, proseSpan{Text: s[2 : 2+j], Strong: true})
				s = s[4+j:]
				continue
			}
		}
		text(s[:1])
		s = s[1:]
	}
	return out
}

// inlineProse is a short description (a parameter's, a property's, a
// response's) as one line of spans: its paragraphs joined.
func inlineProse(s string) proseLine {
	var out proseLine
	for _, b := range parseProse(s) {
		for _, l := range b.Items {
			if len(out) > 0 {
				out = append(out, proseSpan{Text: " "})
			}
			out = append(out, l...)
		}
	}
	return out
}
