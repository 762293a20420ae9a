package crawler

import (
	"context"

	"github.com/cardexhq/cardex/fetch"
	"github.com/cardexhq/cardex/registry"
	"github.com/cardexhq/cardex/verifier"
)

// crawl is the scheduler's work for one claimed agent: the pipeline, then
// the outcome in registry terms with the next fetch time. ok is always
// true; run drops a crawl cut short by Shutdown.
func (s *Scheduler) crawl(ctx context.Context, a registry.DueAgent) (registry.FetchResult, bool) {
	start := s.cfg.Now()
	t := Target{
		CardURL: a.CardURL, FetchedURL: a.FetchedURL, BareHost: a.BareHost,
		ETag: a.ETag, LastModified: a.LastModified, Pinned: a.PinnedKeys,
		Latest: a.Latest, LatestURL: a.LatestURL,
	}
	var out Outcome
	switch {
	case a.CatalogMissing && a.CatalogCard != nil:
		// An inline card has no other source than its catalog: dropped
		// from it, the card is gone. A card with a URL of its own is
		// fetched as always: leaving a catalog never fails an agent whose
		// card still loads (docs/threats.md K.102).
		out = NotListed(a.CardURL, a.Catalog)
	case a.CatalogCard != nil:
		out = s.pipe.Inline(ctx, t, a.CatalogCard)
	default:
		out = s.pipe.Crawl(ctx, t)
	}
	res := FetchResult(out)
	now := s.cfg.Now()
	res.Attempt.At = start // the scheduler's clock, which the registry's gone-after period runs on
	if out.Err != nil {
		res.NextFetchAt = now.Add(s.cfg.Schedule.AfterFailure(a.ConsecutiveFailures+1, out.Status, out.Header, now, s.cfg.Rand))
		s.log.Debug("crawl failed", "agent_id", a.ID, "class", fetch.ClassOf(out.Err), "status", out.Status)
	} else {
		res.NextFetchAt = now.Add(s.cfg.Schedule.AfterSuccess(out.Header, s.cfg.Rand))
	}
	return res, true
}

// FetchResult translates an outcome into what the registry records:
// verifier statuses become registry trust values and signature results
// (registry never imports the verifier). NextFetchAt is left zero.
func FetchResult(out Outcome) registry.FetchResult {
	res := registry.FetchResult{
		Attempt: registry.FetchAttempt{
			At: out.Start, URL: out.URL, HTTPStatus: out.Status, Duration: out.Duration, Bytes: out.Bytes,
		},
		NotModified: out.NotModified,
		FetchedURL:  out.RequestedURL,
	}
	if out.Header != nil && out.Err == nil {
		res.ETag, res.LastModified = out.Header.Get("ETag"), out.Header.Get("Last-Modified")
	}
	if out.Err != nil {
		res.Attempt.ErrorClass = fetch.ClassOf(out.Err)
		if res.Attempt.ErrorClass == "" {
			res.Attempt.ErrorClass = fetch.ClassConnect
		}
		res.Attempt.Message = out.Err.Error()
		res.FetchedURL = ""
		return res
	}
	if out.Parsed == nil {
		return res // 304
	}
	res.Raw = out.Body
	res.ContentSHA256 = verifier.ContentDigest(out.Parsed.Tree)
	if !out.NotModified {
		res.LegacyRaw = out.Legacy
		res.Card = out.Parsed.Card
		res.Problems = out.Problems
		res.ProtocolVersion = ProtocolVersion(out.Parsed.Card)
	}
	// A re-verified 304 reports the stored bytes and their verdict of now,
	// no card: the registry updates the verdict only (registry.FetchResult).
	res.Trust = Trust(out.Verdict)
	res.Profile = out.Verdict.Profile
	res.Thumbprints = out.Verdict.Thumbprints
	res.Signatures = make([]registry.SignatureResult, len(out.Verdict.Signatures))
	for i, sr := range out.Verdict.Signatures {
		res.Signatures[i] = registry.SignatureResult{
			Index: sr.Index, Kid: sr.Kid, Alg: sr.Alg, KeySource: sr.KeySource, Profile: sr.Profile,
			Status: sr.Status, Reason: sr.Reason, Thumbprint: sr.Thumbprint, Unsigned: sr.Unsigned,
		}
	}
	return res
}

// Trust maps a verdict to the registry's trust value (docs/verification.md).
func Trust(v verifier.Verdict) registry.Trust {
	switch v.Status {
	case verifier.StatusVerified:
		return registry.TrustVerified
	case verifier.StatusError:
		return registry.TrustError
	case verifier.StatusUntrusted:
		return registry.TrustUntrusted
	case verifier.StatusInvalid:
		return registry.TrustInvalid
	case verifier.StatusUnsigned:
		return registry.TrustUnsigned
	}
	return registry.TrustInvalid
}
