package agentcard

import "encoding/json"

// ViewRevision names what ViewJSON writes. Cardex stores each version's
// view beside the version (the registry's card_views), so a listing serves
// a card without decoding and re-rendering it. A change to what A2A or
// ViewJSON writes must increase ViewRevision: stored views of another
// revision are then ignored and rendered again (TestViewRevisionPinned
// fails until it is increased). Revision 2 added the card's summary
// (SummaryJSON) beside the view.
const ViewRevision = 2

// ViewJSON is the JSON of c.A2A(): the card as the API, the web UI and the
// discovery surfaces show it, with encoding/json's HTML escaping. It is
// "null" for a nil card.
func (c *Card) ViewJSON() ([]byte, error) {
	return json.Marshal(c.A2A())
}
