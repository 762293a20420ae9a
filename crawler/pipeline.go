package crawler

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/cardurl"
	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/verifier"
)

// Target is one agent to crawl: what the registry remembers of it.
type Target struct {
	// CardURL is the agent's normalized card URL, its identity (docs/api.md
	// §1); its origin is the origin keys are checked against.
	CardURL string
	// FetchedURL is the URL that answered last time ("" before the first
	// fetch); it is tried first, so an agent found at the legacy path is not
	// asked for the new one on every crawl.
	FetchedURL string
	// BareHost: the submission named only a host, so the legacy path is a
	// fallback when the well-known card answers 404.
	BareHost bool
	// Validators of the last 200 from FetchedURL (conditional re-crawl).
	ETag, LastModified string
	// Pinned is a JWKS an admin pinned for the agent (nil when none).
	Pinned []byte
	// Latest is the stored card the validators belong to, when its
	// verdict depends on keys, and LatestURL where it was fetched: a 304
	// re-verifies it against the keys of now (docs/threats.md D.52, D.44).
	// Nil: a 304 is reported without a verdict.
	Latest    []byte
	LatestURL string
}

// Outcome is everything one crawl learnt. Exactly one of Err, NotModified
// and Parsed describes the result, except that a Reverified 304 has
// Parsed too.
type Outcome struct {
	// RequestedURL is the candidate URL that answered (CardURL or the legacy
	// path), or the last one tried when none did; URL is where the answer
	// came from after same-origin redirects.
	RequestedURL, URL string
	Start             time.Time
	Status            int           // HTTP status of the answer (0 when none)
	Duration          time.Duration // fetch, parse and verify, every request included
	Bytes             int64         // response bytes read over every request
	Header            http.Header   // of the answer; nil when none
	NotModified       bool
	// Reverified is set on a 304 whose stored card (Target.Latest) was
	// parsed and verified again: Body, Parsed and Verdict are then about
	// those stored bytes.
	Reverified bool
	// Body is the card as received (nil for errors, and for a 304 unless
	// Reverified).
	Body []byte
	// Legacy is the agent's v0.3 rendering of the card: fetched again with
	// A2A-Version: 0.3 when the answer said Vary: A2A-Version, and kept
	// only when it is a card the verifier judges as it judged Body (same
	// trust, same keys). nil otherwise.
	Legacy  []byte
	Parsed  *agentcard.Parsed
	Verdict verifier.Verdict
	// Err is a *FetchError: the fetcher's classes, or not_json, not_a_card
	// and invalid_card for a body that is not a valid card (docs/security.md "Network policy").
	Err error
	// Problems are the parser's findings: the warnings of a valid card, or
	// the errors of an invalid_card / not_a_card / not_json body.
	Problems []agentcard.Problem
}

// Pipeline is fetch → parse → verify for one agent, shared by the scheduler
// and `cardex crawl`. It stores nothing.
type Pipeline struct {
	Fetcher  *fetch.Fetcher
	Verifier *verifier.Verifier
}

// Crawl fetches t conditionally, falls back to the legacy path for a bare
// host, parses the body strictly and verifies its signatures against keys
// bound to the agent's origin.
func (p *Pipeline) Crawl(ctx context.Context, t Target) (out Outcome) {
	out.Start = time.Now()
	origin, err := fetch.OriginOf(t.CardURL)
	if err != nil {
		out.RequestedURL, out.URL = t.CardURL, t.CardURL
		out.Err = &fetch.FetchError{Class: fetch.ClassBlockedAddress, Hop: truncate(t.CardURL, 200), Err: err}
		return out
	}
	candidates := []string{t.CardURL}
	if t.FetchedURL != "" && t.FetchedURL != t.CardURL {
		candidates = []string{t.FetchedURL, t.CardURL}
	} else if t.BareHost {
		candidates = append(candidates, origin+cardurl.LegacyPath)
	}
	defer func() { out.Duration = time.Since(out.Start) }()
	var (
		resp        *fetch.Response
		conditional bool
	)
	for i, u := range candidates {
		req := fetch.Request{URL: u, FollowRedirects: true, SameOriginOnly: true, Origin: origin}
		if i == 0 {
			// Validators belong to the URL that last answered.
			req.ETag, req.LastModified = t.ETag, t.LastModified
		}
		conditional = req.ETag != "" || req.LastModified != ""
		out.RequestedURL, out.URL = u, u
		resp, err = p.Fetcher.Fetch(ctx, req)
		if resp != nil {
			out.Bytes += resp.Bytes
		}
		if err == nil || i == len(candidates)-1 || !isNotFound(err) {
			break
		}
		if !t.BareHost {
			break // a full card URL names exactly one document
		}
	}
	if err != nil {
		out.Err = err
		var fe *fetch.FetchError
		if errors.As(err, &fe) {
			out.Status, out.Header = fe.HTTPStatus, fe.Header
		}
		return out
	}
	out.URL, out.Status, out.Header = resp.URL, resp.StatusCode, resp.Header
	if resp.NotModified {
		if !conditional {
			// A 304 to a request without validators names no stored card
			// to keep: an error, not "unchanged" (docs/threats.md B.26
			// "anything else is a recorded error").
			out.Err = &fetch.FetchError{Class: fetch.ClassHTTPStatus, HTTPStatus: resp.StatusCode, Hop: resp.URL, Header: resp.Header,
				Err: wrapf(fetch.ErrHTTPStatus, "304 Not Modified to a request without validators")}
			return out
		}
		out.NotModified = true
		p.reverify(ctx, &out, t, origin)
		return out
	}
	p.parseAndVerify(ctx, &out, resp, origin, t.Pinned)
	return out
}

// Inline parses and verifies a card given inline in a catalog (registry
// DueAgent.CatalogCard) exactly as Crawl does a fetched body: the same
// parser, lint and verifier, keys bound to the origin of t.CardURL (the
// catalog's). Nothing is fetched for the card itself; the catalog's crawl
// brought the bytes.
func (p *Pipeline) Inline(ctx context.Context, t Target, card []byte) (out Outcome) {
	out.Start = time.Now()
	out.RequestedURL, out.URL = t.CardURL, t.CardURL
	defer func() { out.Duration = time.Since(out.Start) }()
	origin, err := fetch.OriginOf(t.CardURL)
	if err != nil {
		out.Err = &fetch.FetchError{Class: fetch.ClassBlockedAddress, Hop: truncate(t.CardURL, 200), Err: err}
		return out
	}
	resp := &fetch.Response{URL: t.CardURL, Body: card, Header: http.Header{}}
	p.parseAndVerify(ctx, &out, resp, origin, t.Pinned)
	return out
}

// ErrNotListed: the catalog that brought an agent no longer lists it.
var ErrNotListed = errors.New("the catalog no longer lists this agent")

// NotListed is the outcome of crawling an inline agent its catalog no
// longer lists: there is nothing to fetch, and the registry records it as
// missing, as it records a 404 (docs/discovery.md). An agent with a card
// URL of its own is fetched instead.
func NotListed(cardURL, catalog string) Outcome {
	now := time.Now()
	return Outcome{Start: now, RequestedURL: cardURL, URL: cardURL,
		Err: &fetch.FetchError{Class: ClassNotListed, Hop: truncate(catalog, 200), Err: ErrNotListed}}
}

func (p *Pipeline) parseAndVerify(ctx context.Context, out *Outcome, resp *fetch.Response, origin string, pinned []byte) {
	// C.28: an HTML page or prose with status 200 is not_json before the
	// parser sees it (the fetcher's check looks at the media type too).
	if err := resp.CheckJSON(); err != nil {
		out.Err = err
		return
	}
	parsed, err := agentcard.Parse(resp.Body, agentcard.Options{CardURL: resp.URL})
	if err != nil {
		out.Err = parseError(resp, err)
		var inv *agentcard.InvalidError
		if errors.As(err, &inv) {
			out.Problems = inv.Problems
		}
		return
	}
	out.Body, out.Parsed, out.Problems = resp.Body, parsed, parsed.Problems
	out.Verdict = p.Verifier.Verify(ctx, parsed.Tree, verifier.VerifyOptions{Origin: origin, Pinned: pinned})
	out.Parsed = signedView(parsed, out.Verdict, resp.URL)
	if variesOnVersion(resp.Header) {
		out.Legacy = p.legacyRendering(ctx, out, resp.URL, origin, pinned)
	}
	if out.Legacy == nil && out.Verdict.LegacyDisagrees {
		// The document's own v0.3 members say something its signature
		// does not: v0.3 clients get the v0.3 form of the signed members
		// instead (docs/verification.md "Serving cards").
		out.Legacy = verifier.LegacyRendering(verifier.Profile(out.Verdict.Profile), parsed.Tree, out.Parsed.Card)
	}
}

// signedView is parsed with Cardex's view of the card: for a verified
// card, what its signature covers (verifier.View); the members it does not
// cover are not stored, shown, indexed or probed (docs/verification.md).
// The raw and spec profiles cover every member Cardex reads.
func signedView(parsed *agentcard.Parsed, v verifier.Verdict, cardURL string) *agentcard.Parsed {
	if !v.Verified() || v.Profile == string(verifier.ProfileRaw) || v.Profile == string(verifier.ProfileSpec) {
		return parsed
	}
	view := *parsed
	view.Card = verifier.View(verifier.Profile(v.Profile), parsed, agentcard.Options{CardURL: cardURL})
	return &view
}

// variesOnVersion reports whether the answer depends on the request's
// A2A-Version (a2a-js with legacy compatibility serves a v0.3 card to
// requests without A2A-Version: 1.0).
func variesOnVersion(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "A2A-Version") {
				return true
			}
		}
	}
	return false
}

// legacyRendering fetches the card as a v0.3 client would and keeps it
// when it is a card judged exactly as the main rendering: the same trust
// and keys, and, when verified, no member outside what its signature
// covers stating something the signed members do not, so serving it to
// v0.3 clients vouches for nothing more. Failures leave the agent with its
// main rendering.
func (p *Pipeline) legacyRendering(ctx context.Context, out *Outcome, u, origin string, pinned []byte) []byte {
	resp, err := p.Fetcher.Fetch(ctx, fetch.Request{URL: u, FollowRedirects: true, SameOriginOnly: true, Origin: origin,
		Header: http.Header{"A2A-Version": {"0.3"}}})
	if resp != nil {
		out.Bytes += resp.Bytes
	}
	if err != nil || resp.NotModified || resp.CheckJSON() != nil || bytes.Equal(resp.Body, out.Body) {
		return nil
	}
	parsed, err := agentcard.Parse(resp.Body, agentcard.Options{CardURL: resp.URL})
	if err != nil {
		return nil
	}
	v := p.Verifier.Verify(ctx, parsed.Tree, verifier.VerifyOptions{Origin: origin, Pinned: pinned})
	if v.Status != out.Verdict.Status || !sameKeys(v.Thumbprints, out.Verdict.Thumbprints) || v.LegacyDisagrees {
		return nil
	}
	return resp.Body
}

func sameKeys(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// reverify checks the stored card again on a 304: the bytes did not change
// but the keys may have (a key removed from the key set, D.52; a key set
// that failed last time and answers now, D.44). The verifier's key cache
// bounds the cost: keys are fetched again only after its TTL, otherwise
// this is a parse and a signature check. Stored bytes that no longer parse
// (a parser grown stricter) leave the 304 without a verdict.
func (p *Pipeline) reverify(ctx context.Context, out *Outcome, t Target, origin string) {
	if len(t.Latest) == 0 {
		return
	}
	u := t.LatestURL
	if u == "" {
		u = out.URL
	}
	parsed, err := agentcard.Parse(t.Latest, agentcard.Options{CardURL: u})
	if err != nil {
		return
	}
	out.Reverified, out.Body, out.Parsed = true, t.Latest, parsed
	out.Verdict = p.Verifier.Verify(ctx, parsed.Tree, verifier.VerifyOptions{Origin: origin, Pinned: t.Pinned})
	out.Parsed = signedView(parsed, out.Verdict, u)
}

// parseError classifies a rejected body (docs/security.md "Network policy").
func parseError(resp *fetch.Response, err error) *fetch.FetchError {
	class := fetch.ClassInvalidCard
	switch {
	case errors.Is(err, agentcard.ErrNotJSON):
		class = fetch.ClassNotJSON
	case errors.Is(err, agentcard.ErrNotACard):
		class = fetch.ClassNotACard
	}
	return &fetch.FetchError{Class: class, HTTPStatus: resp.StatusCode, Hop: resp.URL, Err: err}
}

func isNotFound(err error) bool {
	var fe *fetch.FetchError
	return errors.As(err, &fe) && fe.Class == fetch.ClassHTTPStatus && fe.HTTPStatus == http.StatusNotFound
}

// ProtocolVersion is the version a stored card is filed under: the
// preferred one its interfaces speak, else the one its shape implies
// (docs/api.md: a v0.1/v0.2 card without a declared version).
func ProtocolVersion(c *agentcard.Card) string {
	if c == nil {
		return ""
	}
	if len(c.ProtocolVersions) > 0 {
		return c.ProtocolVersions[0]
	}
	switch c.Shape {
	case "v0.1", "v0.2", "v0.3":
		return strings.TrimPrefix(c.Shape, "v")
	}
	return ""
}
