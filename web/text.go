package web

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cardexhq/cardex/agentcard"
)

// invisible reports runes that change how text around them is displayed
// without being seen: bidi controls (a name with U+202E reads backwards,
// "Trojan Source"), zero-width characters (two names that look equal are
// not), and other control and format characters. They are shown, never
// obeyed (docs/threats.md H.73).
func invisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r == 0x061C, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F, r == 0xFEFF, r == 0x00AD, r == 0x180E, r == 0x034F:
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
}

// visible returns s with every invisible rune written out as ⟨U+XXXX⟩.
// Templates call it as {{t .Name}} on every card-provided string.
func visible(s string) string {
	if strings.IndexFunc(s, invisible) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if invisible(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// short cuts s to at most n runes at a word boundary, marking the cut.
func short(n int, s string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)[:n]
	cut := string(rs)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…"
}

const (
	markOpen  = "<mark>"
	markClose = "</mark>"
)

// highlight turns a search fragment into HTML. The search package
// HTML-escapes fragments and adds <mark> around matched words; this does
// not rely on that (docs/threats.md H.74, the one reviewed use of
// template.HTML): it splits the fragment at <mark> and </mark>, unescapes
// each text piece, makes invisible characters visible, escapes it again,
// and re-inserts only balanced <mark> tags of its own. Whatever the card
// says, the result holds no markup but <mark>.
func highlight(frag string) template.HTML {
	var b strings.Builder
	open := false
	for frag != "" {
		i, tag := nextMark(frag)
		if i < 0 {
			b.WriteString(html.EscapeString(visible(html.UnescapeString(frag))))
			break
		}
		b.WriteString(html.EscapeString(visible(html.UnescapeString(frag[:i]))))
		frag = frag[i+len(tag):]
		switch {
		case tag == markOpen && !open:
			b.WriteString(markOpen)
			open = true
		case tag == markClose && open:
			b.WriteString(markClose)
			open = false
		}
	}
	if open {
		b.WriteString(markClose)
	}
	return template.HTML(b.String()) // #nosec: re-escaped above (H.74)
}

func nextMark(s string) (int, string) {
	o, c := strings.Index(s, markOpen), strings.Index(s, markClose)
	switch {
	case o < 0 && c < 0:
		return -1, ""
	case c < 0 || (o >= 0 && o < c):
		return o, markOpen
	}
	return c, markClose
}

func (u *ui) funcs() template.FuncMap {
	return template.FuncMap{
		"t":          visible,
		"short":      func(n int, s string) string { return visible(short(n, s)) },
		"hl":         highlight,
		"renderable": agentcard.RenderableURL,
		"asset":      u.assets.url,
		"date":       formatTime,
		"ago":        func(t *time.Time) string { return u.ago(t) },
		"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"join":       strings.Join,
		"legendText": legendText,
		"deref":      func(t *time.Time) time.Time { return *t },
		"percent":    percent,
		"deref64":    func(n *int64) int64 { return *n },
		"ptr":        func(t time.Time) *time.Time { return &t },
	}
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// ago is a coarse relative time ("3 hours ago", "in 20 minutes").
func (u *ui) ago(t *time.Time) string {
	if t == nil {
		return "never"
	}
	d := u.cfg.Now().Sub(*t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		s = plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		s = plural(int(d/time.Hour), "hour")
	default:
		s = plural(int(d/(24*time.Hour)), "day")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
