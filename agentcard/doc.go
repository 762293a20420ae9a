// Package agentcard is the A2A Agent Card model of Cardex: Parse reads a
// card of any protocol version (v0.1, v0.2, v0.3, v1.0 and hybrid v1+v0.3
// cards) through the one strict JSON parse (package strictjson) into a
// normalized, v1-shaped Card with validation problems; Diff compares two
// versions semantically; RenderableURL decides whether a card URL may become
// a link.
//
// The raw bytes stay the truth (they are what is signed and stored); the
// Card is a view for search, display and diffs, and never replaces them.
// Text is kept exactly as written (docs/threats.md C.37): the package flags,
// it never rewrites or truncates.
//
// Rejections are *InvalidError values (errors.Is(err, ErrInvalidCard), with
// the reason ErrNotJSON or ErrNotACard where it applies); everything else
// is a warning Problem with a stable code and the JSON pointer of the field.
package agentcard
