package agentcard

import (
	"bytes"
	"slices"
	"strings"

	sj "github.com/cardexhq/cardex/strictjson"
)

// Options tune Parse.
type Options struct {
	// CardURL is the URL the card was fetched from. Interface URLs on another
	// host are flagged (docs/threats.md C.35). Empty for local files: the
	// host check is then skipped.
	CardURL string
	// DropEmpty (SignedView only): leave out interfaces without a URL,
	// skills with nothing in them and "" among media types and examples,
	// as the sdk signers did before signing.
	DropEmpty bool
}

// Parsed is an accepted card: the bytes as received, the one strict tree
// every consumer works from, the normalized model and the warnings.
type Parsed struct {
	// Raw is the input slice itself (not a copy): the stored and signed truth.
	Raw      []byte
	Tree     *sj.Value
	Card     *Card
	Problems []Problem // warnings only; never nil
}

// Parse reads one agent card of any protocol version (v0.1 … v1.0, hybrids)
// strictly and normalizes it.
//
// It rejects, with an *InvalidError (errors.Is(err, ErrInvalidCard)):
// anything strictjson rejects (invalid JSON, trailing data, duplicate keys
// at any depth, invalid UTF-8, lone surrogates, out-of-range numbers, depth
// over 64, over 512 KiB, a BOM; reason ErrNotJSON); a top level that is not
// an object or a JSON document that is not an agent card (reason
// ErrNotACard; see isCard); keys that differ only in case from a model
// field; a field written in both its camelCase and snake_case spelling; and
// a known field of the wrong JSON type (docs/api.md "Card parsing"); and a
// card without a name or without an A2A endpoint (codes no-name,
// no-endpoint; reason ErrInvalidCard): it is never a listable agent
// (docs/lint.md).
//
// A null member of an object is read as absent with a "null-value" warning
// (ProtoJSON reads null as unset; docs/api.md "Card parsing" makes missing REQUIRED
// fields warnings), also in REQUIRED fields. A null array element
// (`"skills":[null]`) or a null security scheme is "wrong-type": there is
// nothing to read as absent there. A null scope list is an empty one.
//
// Everything else is a warning in Parsed.Problems: missing or empty v1
// REQUIRED fields, null values (read as absent), URLs that are not absolute
// https or use dangerous schemes, interfaces off the card's host, bidi and
// zero-width characters in names and descriptions, fields over the caps of
// limits.go, duplicate skill ids, undefined security schemes.
func Parse(data []byte, opts Options) (*Parsed, error) {
	tree, err := sj.Parse(data)
	if err != nil {
		return nil, syntaxError(data, err)
	}
	if tree.Kind != sj.Object {
		return nil, &InvalidError{Reason: ErrNotACard, Problems: []Problem{{
			Pointer: "", Severity: SeverityError, Code: CodeNotAnObject,
			Message: "an agent card is a JSON object, this document is " + article(tree.Kind) + " " + tree.Kind.String(),
		}}}
	}
	if !isCard(tree) {
		return nil, &InvalidError{Reason: ErrNotACard, Problems: []Problem{{
			Pointer: "", Severity: SeverityError, Code: CodeNotACard,
			Message: "the object has none of the members that make an A2A agent card (supportedInterfaces, url, skills, defaultInputModes, securitySchemes, …)",
		}}}
	}
	n := &normalizer{cardURL: opts.CardURL}
	card := n.card(tree)
	// A card names its agent and says where to reach it. A document with
	// neither is some other document (an MCP or service manifest); one
	// missing either is a fragment. Neither is ever a listable agent
	// (docs/lint.md). Signatures over such a document are still checked by
	// the verifier, which reads the JSON tree, not this model.
	noName, noEndpoint := strings.TrimSpace(card.Name) == "", !hasA2AInterface(card)
	switch {
	case noName && noEndpoint:
		n.c.fail("", CodeNotACard, "an agent card names its agent and lists at least one endpoint; this document has neither")
		return nil, &InvalidError{Reason: ErrNotACard, Problems: n.c.problems()}
	case noName:
		n.c.fail("/name", CodeNoName, "the card has no name: it is not an agent card")
	case noEndpoint:
		n.c.fail("/supportedInterfaces", CodeNoEndpoint, "the card lists no A2A endpoint: clients cannot reach the agent")
	}
	if n.c.hasErr {
		return nil, &InvalidError{Reason: ErrInvalidCard, Problems: n.c.problems()}
	}
	return &Parsed{Raw: data, Tree: tree, Card: card, Problems: n.c.problems()}, nil
}

// cardMembers are the members only an agent card has (top level, camelCase
// or snake_case); one of them makes a document a card. "name",
// "description", "version" and "capabilities" are not enough: MCP
// manifests, package files and the orchestration agent of A2A PR #258
// (testdata: a non-A2A document with name, version and a capabilities
// array) have them too. "url" and "protocolVersion" are common words, so
// they count only beside a "name" (a v0.x card reduced to name + url is
// still recognizably one). Every published card in testdata, down to the
// TCK's minimal signing vector, has skills, modes or an endpoint.
var cardMembers = []string{
	"supportedInterfaces", "supported_interfaces", "preferredTransport", "preferred_transport",
	"additionalInterfaces", "additional_interfaces", "skills", "defaultInputModes", "default_input_modes",
	"defaultOutputModes", "default_output_modes", "securitySchemes", "security_schemes",
	"securityRequirements", "security_requirements", "supportsAuthenticatedExtendedCard",
	"supports_authenticated_extended_card",
}

var cardMembersWithName = []string{"url", "protocolVersion", "protocol_version"}

func isCard(tree *sj.Value) bool {
	named := tree.Get("name") != nil
	for _, m := range tree.Object {
		if slices.Contains(cardMembers, m.Key) || (named && slices.Contains(cardMembersWithName, m.Key)) {
			return true
		}
	}
	return false
}

var syntaxCodes = map[string]string{
	sj.CodeEmpty:        CodeEmptyDocument,
	sj.CodeTooLarge:     CodeTooLarge,
	sj.CodeBOM:          CodeByteOrderMark,
	sj.CodeInvalidUTF8:  CodeInvalidUTF8,
	sj.CodeLoneSurrog:   CodeLoneSurrogate,
	sj.CodeSyntax:       CodeInvalidJSON,
	sj.CodeTrailingData: CodeTrailingData,
	sj.CodeDuplicateKey: CodeDuplicateKey,
	sj.CodeTooDeep:      CodeTooDeep,
	sj.CodeNumberRange:  CodeNumberOutOfRange,
}

// syntaxError maps a strictjson rejection to a problem. The message names
// the byte offset and pointer but never quotes the body (C.28: the raw body
// is not shown).
func syntaxError(data []byte, err error) error {
	p := Problem{Severity: SeverityError, Code: CodeInvalidJSON, Message: err.Error()}
	if e, ok := sj.AsError(err); ok {
		p.Pointer = e.Pointer
		if code, ok := syntaxCodes[e.Code]; ok {
			p.Code = code
		}
		if e.Code == sj.CodeSyntax && looksLikeHTML(data) {
			p.Message = "the document is HTML, not JSON (" + e.Error() + ")"
		}
	}
	return &InvalidError{Reason: ErrNotJSON, Problems: []Problem{p}}
}

func looksLikeHTML(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '<'
}
