package verifier

import (
	"context"
	"crypto"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/cardexhq/cardex/agentcard"
	"github.com/cardexhq/cardex/strictjson"
	"github.com/go-jose/go-jose/v4"
)

// run is the state of one card verification: the canonical payloads,
// computed once per profile and shared by all signatures, the pinned set and
// the key set URLs used so far.
type run struct {
	v          *Verifier
	card       *strictjson.Value
	payloads   map[Profile][]byte
	payloadErr map[Profile]error
	coverage   map[Profile]agentcard.Coverage

	origin    origin
	hasOrigin bool
	originErr string

	hasPinned bool
	pinned    *keySet
	pinnedErr error

	urls []string // distinct key set URLs used (D.51)
}

func (v *Verifier) newRun(card *strictjson.Value, opts VerifyOptions) *run {
	r := &run{v: v, card: card, payloads: make(map[Profile][]byte, len(Profiles)), payloadErr: map[Profile]error{},
		coverage: map[Profile]agentcard.Coverage{}}
	if opts.Origin != "" {
		o, err := parseOrigin(opts.Origin)
		if err != nil {
			r.originErr = fmt.Sprintf("origin %q is not an http(s) origin", opts.Origin)
		} else {
			r.origin, r.hasOrigin = o, true
		}
	}
	if len(opts.Pinned) > 0 {
		r.hasPinned = true
		r.pinned, r.pinnedErr = v.pinned.get(opts.Pinned)
	}
	return r
}

func (r *run) payload(p Profile) ([]byte, error) {
	if b, ok := r.payloads[p]; ok {
		return b, r.payloadErr[p]
	}
	b, err := Canonicalize(p, r.card)
	r.payloads[p], r.payloadErr[p] = b, err
	return b, err
}

// covers checks what profile p leaves unsigned in the card (once per
// profile; every signature of the card shares it).
func (r *run) covers(p Profile) agentcard.Coverage {
	if c, ok := r.coverage[p]; ok {
		return c
	}
	c := agentcard.CheckCoverage(r.card, SignedTree(p, r.card))
	r.coverage[p] = c
	return c
}

// source is one trusted place to look for the signature's key.
type source struct {
	name string // SourcePinned, SourceJKU, SourceWellKnown
	url  string
}

// examine verifies one signature on its own.
func (r *run) examine(ctx context.Context, i int, s *strictjson.Value) SignatureResult {
	res := SignatureResult{Index: i, KeySource: SourceNone, Status: StatusInvalid}
	var notes []string
	fail := func(status, reason string) SignatureResult {
		res.Status = status
		res.Reason = joinReason(reason, notes)
		return res
	}
	if s.Kind != strictjson.Object {
		return fail(StatusInvalid, "signature entry is not an object")
	}
	prot, sig := s.Get("protected"), s.Get("signature")
	if prot == nil || prot.Kind != strictjson.String {
		return fail(StatusInvalid, "signature entry has no protected string")
	}
	if sig == nil || sig.Kind != strictjson.String || sig.String == "" {
		return fail(StatusInvalid, "signature entry has no signature string (docs/threats.md D.39)")
	}
	// The unprotected header never steers verification: the JWS is rebuilt
	// in compact form from protected and signature only (D.46).
	note, critOutside := unprotectedNote(s.Get("header"))
	if note != "" {
		notes = append(notes, note)
	}
	h, err := parseProtected(prot.String)
	res.Alg, res.Kid, res.JKU = h.alg, h.kid, h.jku
	if err != nil {
		return fail(StatusInvalid, err.Error())
	}
	if critOutside {
		return fail(StatusInvalid, "crit in the unprotected header (docs/threats.md D.47)")
	}
	sigBytes, err := decodeB64URL(sig.String)
	if err != nil {
		return fail(StatusInvalid, "signature: "+err.Error())
	}
	if n := allowedAlgs[h.alg].sigLen; n != 0 && len(sigBytes) != n {
		return fail(StatusInvalid, fmt.Sprintf("%s signature must be %d bytes, got %d (docs/threats.md D.48)", h.alg, n, len(sigBytes)))
	}
	// go-jose parses the compact detached form once; each profile's payload
	// is then handed to DetachedVerify (the placeholder here is never used).
	jws, err := jose.ParseDetached(prot.String+".."+sig.String, []byte{}, joseAlgs)
	if err != nil {
		return fail(StatusInvalid, "not a valid JWS: "+err.Error())
	}

	sources, untrusted := r.sources(h)
	for _, name := range h.embedded {
		untrusted = append(untrusted, "embedded "+name+" is never a trust root (docs/threats.md D.42)")
	}
	var (
		invalidReason string
		invalidSource string
		errs          []string
		consulted     []string
	)
	for _, src := range sources {
		set, err := r.keySet(ctx, src)
		if err != nil {
			errs = append(errs, describeSource(src)+": "+err.Error())
			continue
		}
		consulted = append(consulted, describeSource(src))
		key, ok := set.lookup(h.kid)
		if !ok {
			continue
		}
		if key.err != nil {
			// The source names this key but it cannot be a valid key for
			// any allowed algorithm (bad curve point, e=1…, D.41).
			invalidReason, invalidSource = fmt.Sprintf("key %q from %s is unusable: %v (docs/threats.md D.41)", h.kid, describeSource(src), key.err), src.name
			continue
		}
		if key.alg != "" && key.alg != h.alg {
			invalidReason, invalidSource = fmt.Sprintf("key %q from %s is for %s, the signature uses %s (docs/threats.md D.41)", h.kid, describeSource(src), key.alg, h.alg), src.name
			continue
		}
		if err := checkKey(h.alg, key.pub); err != nil {
			invalidReason, invalidSource = fmt.Sprintf("key %q from %s: %v (docs/threats.md D.41)", h.kid, describeSource(src), err), src.name
			continue
		}
		if p, ok := r.tryProfiles(jws, h.alg, key.pub); ok {
			res.KeySource, res.Profile = src.name, string(p)
			// A signature vouches only for what its profile signs: Cardex's
			// view of the card is those members, and the members left out
			// are listed and ignored, whatever they say
			// (docs/verification.md).
			cov := r.covers(p)
			res.Unsigned = cov.Uncovered
			res.disagreeing = len(cov.Disagreeing) > 0
			res.Status = StatusVerified
			res.Thumbprint = thumbprint(key)
			reason := fmt.Sprintf("verified with key %q from %s under profile %s", h.kid, describeSource(src), p)
			if len(cov.Uncovered) > 0 {
				reason += fmt.Sprintf("; %d member(s) not covered by the signature, ignored (unsigned)", len(cov.Uncovered))
			}
			res.Reason = joinReason(reason, notes)
			return res
		}
		invalidReason, invalidSource = fmt.Sprintf("no canonicalization profile (%s) verifies under key %q from %s", profileList(), h.kid, describeSource(src)), src.name
	}
	switch {
	case invalidReason != "":
		res.KeySource = invalidSource
		return fail(StatusInvalid, invalidReason)
	case len(errs) > 0:
		if len(consulted) > 0 {
			errs = append(errs, fmt.Sprintf("no key %q in %s", h.kid, strings.Join(consulted, ", ")))
		}
		return fail(StatusError, strings.Join(errs, "; "))
	case len(untrusted) > 0:
		return fail(StatusUntrusted, strings.Join(untrusted, "; "))
	case len(consulted) > 0:
		return fail(StatusError, fmt.Sprintf("no key %q in %s", h.kid, strings.Join(consulted, ", ")))
	}
	reason := "no trusted key source: no pinned keys and no origin"
	if r.originErr != "" {
		reason += " (" + r.originErr + ")"
	}
	return fail(StatusUntrusted, reason)
}

// sources lists the trusted key sources for h in the order of docs/security.md "Network policy"
// and describes the untrusted ones it names.
func (r *run) sources(h *protectedHeader) (trusted []source, untrusted []string) {
	if r.hasPinned {
		trusted = append(trusted, source{name: SourcePinned})
	}
	if h.hasJKU {
		switch {
		case r.hasOrigin && r.origin.contains(h.jku):
			trusted = append(trusted, source{name: SourceJKU, url: h.jku})
		case r.hasOrigin:
			untrusted = append(untrusted, fmt.Sprintf("jku %q is not on the agent's origin %s and is never fetched (docs/threats.md D.43)", h.jku, r.origin))
		default:
			untrusted = append(untrusted, fmt.Sprintf("jku %q is not fetched: no origin to check it against", h.jku))
		}
	}
	if r.hasOrigin {
		wk := r.origin.wellKnownJWKS()
		if len(trusted) == 0 || trusted[len(trusted)-1].url != wk {
			trusted = append(trusted, source{name: SourceWellKnown, url: wk})
		}
	}
	return trusted, untrusted
}

func (r *run) keySet(ctx context.Context, src source) (*keySet, error) {
	if src.name == SourcePinned {
		return r.pinned, r.pinnedErr
	}
	if r.v.cache == nil {
		return nil, fmt.Errorf("%w: no key set fetcher configured", ErrKeySetFetch)
	}
	if !contains(r.urls, src.url) {
		if len(r.urls) >= r.v.maxURLs {
			return nil, fmt.Errorf("%w: not fetched, at most %d key set URLs per card (docs/threats.md D.51)", ErrKeySetBudget, r.v.maxURLs)
		}
		r.urls = append(r.urls, src.url)
	}
	set, err := r.v.cache.get(ctx, src.url)
	if err != nil {
		r.v.log.Debug("key set unusable", "url", src.url, "err", err)
	}
	return set, err
}

// tryProfiles verifies the parsed JWS against each profile's payload in the
// order of docs/verification.md.
func (r *run) tryProfiles(jws *jose.JSONWebSignature, alg string, pub crypto.PublicKey) (Profile, bool) {
	verifier := primitiveVerifier{alg: alg, pub: pub}
	for _, p := range Profiles {
		payload, err := r.payload(p)
		if err != nil {
			continue
		}
		if jws.DetachedVerify(payload, verifier) == nil {
			return p, true
		}
	}
	return "", false
}

func thumbprint(k *setKey) string {
	tp, err := k.jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

func describeSource(s source) string {
	if s.name == SourcePinned {
		return "pinned keys"
	}
	return s.name + " " + s.url
}

func profileList() string {
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

func joinReason(reason string, notes []string) string {
	if len(notes) == 0 {
		return reason
	}
	return reason + "; " + strings.Join(notes, "; ")
}
