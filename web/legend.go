package web

import "net/http"

// legendEntry explains one badge value. The legend page and every badge's
// tooltip read the same table, so the two never say different things.
type legendEntry struct {
	Value, Text string
}

type legendGroup struct {
	Kind, Title, Intro string
	Entries            []legendEntry
}

// legend is what Cardex checked for each badge (docs/publishing.md walks
// a publisher through reaching "signature: verified").
var legend = []legendGroup{
	{Kind: "signature", Title: "Signature",
		Intro: "Whether the card is signed, and whether Cardex could check the signature with a key it trusts: " +
			"a key an admin pinned for the agent, the key set named by the card's jku on the agent's own origin, " +
			"or the origin's /.well-known/jwks.json. Every member Cardex shows must be covered by the signature.",
		Entries: []legendEntry{
			{"verified", "A signature verified with a key Cardex trusts for this agent, and it covers every member shown here."},
			{"unsigned", "The card carries no signature. Nothing vouches that the host's owner wrote it; it is what the host served."},
			{"untrusted", "The card is signed, but only with keys Cardex never trusts (an embedded key, a certificate, or a key set on another origin)."},
			{"invalid", "A signature does not verify: the card was changed after signing, the algorithm or key does not match, or the signature leaves shown members uncovered. Treat the card as tampered."},
			{"error", "A trusted key source could not be fetched or holds no key with the signature's key id, so the signature could not be checked. This says nothing about whether the agent answers."},
			{"unknown", "The card has not been fetched yet."},
		}},
	{Kind: "health", Title: "Health",
		Intro: "Whether the card could be fetched from its URL the last time Cardex tried. It is about the card, not about the agent's own endpoints.",
		Entries: []legendEntry{
			{"ok", "The last fetch loaded a valid card."},
			{"failing", "Recent fetches failed (network, TLS, HTTP status or a card that does not parse). The last good card is still shown."},
			{"gone", "The card kept failing or disappeared (404 or 410 several times in a row); the agent left the public catalogue."},
			{"unknown", "The card has not been fetched yet."},
		}},
	{Kind: "liveness", Title: "A2A liveness",
		Intro: "Whether the agent's own endpoints answer the A2A protocol, not just whether its card loads. Each interface of the card is sent " +
			"a read of a task that cannot exist (nothing the agent would act on) every few minutes.",
		Entries: []legendEntry{
			{"answering", "Every interface answered with an A2A reply (or said it needs credentials)."},
			{"degraded", "Some interfaces failed or did not answer in A2A (for example an HTML page or a bare 404)."},
			{"unreachable", "No interface could be reached: connection refused or reset, no answer in time, TLS failure or a server error."},
			{"unknown", "Not probed yet, or a curator turned probing off for this agent."},
		}},
	{Kind: "status", Title: "Curation status",
		Intro: "What a curator of this registry decided.",
		Entries: []legendEntry{
			{"approved", "A curator approved the agent; new versions become current unless their trust drops, which waits for review."},
			{"pending", "Submitted and waiting for a curator; not listed in the catalogue yet."},
			{"rejected", "A curator declined to list the agent."},
			{"suspended", "Listed once, hidden for now by a curator."},
			{"removed", "Taken out of the registry by a curator."},
		}},
}

// legendText is a badge's tooltip: the legend's sentence for value.
func legendText(kind, value string) string {
	for _, g := range legend {
		if g.Kind != kind {
			continue
		}
		for _, e := range g.Entries {
			if e.Value == value {
				return e.Text
			}
		}
	}
	return ""
}

// legendPage is GET /legend: what every badge means and what Cardex checked.
func (u *ui) legendPage(w http.ResponseWriter, r *http.Request) error {
	u.render(w, r, http.StatusOK, "legend", "What the badges mean", legend)
	return nil
}
