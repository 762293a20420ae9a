package agentcard

import (
	"encoding/json"

	sj "github.com/cardexhq/cardex/strictjson"
)

// ViewRevision names what ViewJSON writes. Cardex stores each version's
// view beside the version (the registry's card_views), so a listing serves
// a card without decoding and re-rendering it. A change to what A2A or
// ViewJSON writes must increase ViewRevision: stored views of another
// revision are then ignored and rendered again (TestViewRevisionPinned
// fails until it is increased). Revision 2 renders only interfaces the A2A
// SDKs can use and added the card's summary (SummaryJSON) beside the view.
const ViewRevision = 2

// ViewJSON is the JSON of c.A2A(): the card as the API, the web UI and the
// discovery surfaces show it, with encoding/json's HTML escaping. It is
// "null" for a nil card.
func (c *Card) ViewJSON() ([]byte, error) {
	return json.Marshal(c.A2A())
}

// SignedView is Cardex's view of a verified card (docs/verification.md):
// the card normalized from signed, the members its verifying signature
// covers (verifier.ViewTree), rather than from the whole document full.
// What the signature does not cover is not shown, stored, indexed, probed
// or served. The shape (how the card was written) and the signatures are
// the whole document's. With opts.DropEmpty, empty elements are left out.
func SignedView(full *Parsed, signed *sj.Value, opts Options) *Card {
	if full == nil || signed == nil || signed.Kind != sj.Object {
		return full.card()
	}
	n := &normalizer{cardURL: opts.CardURL, dropEmpty: opts.DropEmpty}
	c := n.card(signed)
	c.Shape, c.Signatures = full.Card.Shape, full.Card.Signatures
	return c
}

func (p *Parsed) card() *Card {
	if p == nil {
		return nil
	}
	return p.Card
}
