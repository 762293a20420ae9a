package agentcard

import (
	"unicode"
	"unicode/utf8"
)

// Text checks for docs/threats.md C.36 (bidi, zero-width and homograph
// names) and C.33 (oversized fields). Text is always stored exactly as
// written (C.37); these only flag.

// isBidiControl reports the explicit directional formatting characters
// (embeddings, overrides, isolates and marks) that can reorder what a reader
// sees, as in "Pay\u202Epal".
func isBidiControl(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200E || r == 0x200F || r == 0x061C
}

// isZeroWidth reports invisible characters that make two names look the
// same ("Goo\u200Bgle").
func isZeroWidth(r rune) bool {
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x00AD:
		return true
	}
	return r >= 0x2061 && r <= 0x2064
}

// isControl reports C0 and C1 control characters.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7F && r <= 0x9F) }

// checkName flags a name (card, skill, provider organization): no control
// characters at all, no bidi or zero-width characters, one confusable script.
func (n *normalizer) checkName(ptr, s string) {
	n.checkText(ptr, s, false)
	if c := utf8.RuneCountInString(s); c > MaxNameChars {
		n.c.warn(ptr, CodeTooLong, "%d characters, more than the %d allowed", c, MaxNameChars)
	}
	if mixedScript(s) {
		n.c.warn(ptr, CodeMixedScript, "mixes Latin, Cyrillic or Greek letters, which can imitate another name")
	}
}

// checkProse flags a description: tabs and line breaks are fine.
func (n *normalizer) checkProse(ptr, s string, maxBytes int) {
	n.checkText(ptr, s, true)
	if len(s) > maxBytes {
		n.c.warn(ptr, CodeTooLong, "%d bytes, more than the %d allowed", len(s), maxBytes)
	}
}

func (n *normalizer) checkText(ptr, s string, prose bool) {
	var bidi, zw, ctl bool
	for _, r := range s {
		switch {
		case isBidiControl(r):
			bidi = true
		case isZeroWidth(r):
			zw = true
		case isControl(r) && !(prose && (r == '\n' || r == '\t' || r == '\r')):
			ctl = true
		}
	}
	if bidi {
		n.c.warn(ptr, CodeBidiControl, "contains bidirectional control characters")
	}
	if zw {
		n.c.warn(ptr, CodeZeroWidth, "contains zero-width or invisible characters")
	}
	if ctl {
		n.c.warn(ptr, CodeControlCharacter, "contains control characters")
	}
}

// mixedScript reports letters from more than one of the scripts whose
// letters look alike (Cyrillic "раураl" imitating Latin "paypal").
func mixedScript(s string) bool {
	var latin, cyrillic, greek bool
	for _, r := range s {
		if r < utf8.RuneSelf {
			latin = latin || (r|0x20 >= 'a' && r|0x20 <= 'z')
			continue
		}
		switch {
		case unicode.Is(unicode.Latin, r):
			latin = true
		case unicode.Is(unicode.Cyrillic, r):
			cyrillic = true
		case unicode.Is(unicode.Greek, r):
			greek = true
		}
	}
	n := 0
	for _, b := range []bool{latin, cyrillic, greek} {
		if b {
			n++
		}
	}
	return n > 1
}
