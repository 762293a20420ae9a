package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/cardexhq/cardex/agentcard"
	"gorm.io/gorm"
)

// isMissing: the card is not there any more, as the host says (404, 410)
// or as the catalog that brought the agent says by no longer listing it.
func isMissing(a FetchAttempt) bool {
	return a.HTTPStatus == 404 || a.HTTPStatus == 410 || a.ErrorClass == ErrorClassNotListed
}

// goneAfterMissing is how many consecutive missing answers (404/410, or
// not listed by its catalog) withdraw an agent (docs/design.md: the card
// withdrawn from the host leaves the catalogue).
const goneAfterMissing = 3

func (s *Service) recordFailure(r *agentRow, res FetchResult, at time.Time, upd map[string]any) Health {
	failingSince := at
	if r.FailingSince != nil {
		failingSince = utc(*r.FailingSince)
	}
	missing := 0
	if isMissing(res.Attempt) {
		missing = r.ConsecutiveMissing + 1
	}
	upd["consecutive_failures"] = r.ConsecutiveFailures + 1
	upd["consecutive_missing"] = missing
	upd["failing_since"] = failingSince
	upd["last_error_class"] = res.Attempt.ErrorClass
	upd["last_error_status"] = res.Attempt.HTTPStatus
	upd["last_error_message"] = cleanMessage(res.Attempt.Message)
	upd["last_error_at"] = at
	if s.goneAfter(missing, failingSince, at) {
		return HealthGone
	}
	return HealthFailing
}

// goneAfter is the one rule that makes a failing agent, or catalog, gone:
// goneAfterMissing consecutive missing answers, or failing since
// ServiceConfig.GoneAfter ago (docs/design.md crawl lifecycle;
// docs/discovery.md "A catalog's lifecycle").
func (s *Service) goneAfter(missing int, failingSince, at time.Time) bool {
	return missing >= goneAfterMissing || at.Sub(failingSince) >= s.cfg.GoneAfter
}

func recordSuccess(r *agentRow, res FetchResult, at time.Time, upd map[string]any) {
	upd["consecutive_failures"] = 0
	upd["consecutive_missing"] = 0
	upd["failing_since"] = nil
	upd["last_success_at"] = at
	upd["last_error_class"] = ""
	upd["last_error_status"] = 0
	upd["last_error_message"] = ""
	upd["last_error_at"] = nil
	if res.ETag != "" || !res.NotModified {
		upd["etag"] = res.ETag
	}
	if res.LastModified != "" || !res.NotModified {
		upd["last_modified"] = res.LastModified
	}
	if res.FetchedURL != "" {
		upd["fetched_url"] = res.FetchedURL
	}
}

func sortedThumbs(t []string) []string {
	thumbs := slices.Clone(t)
	slices.Sort(thumbs)
	thumbs = slices.Compact(thumbs)
	if thumbs == nil {
		thumbs = []string{}
	}
	return thumbs
}

// maybeAddVersion stores res as a new version when its bytes differ from
// the newest stored version (latest, nil when there is none or the result
// is a 304), and decides whether it becomes current. Unchanged bytes that
// come with a verdict go to reverify instead.
func (s *Service) maybeAddVersion(tx *gorm.DB, r *agentRow, latest *versionRow, res FetchResult, at time.Time, upd map[string]any, w *batchWrites) (bool, error) {
	if res.Raw == nil {
		return false, nil // a 304 that was not re-verified
	}
	sum := sha256.Sum256(res.Raw)
	sha := hex.EncodeToString(sum[:])
	if latest != nil && latest.SHA256 == sha {
		reverify(r, latest, res, upd, w)
		return false, nil
	}
	if res.NotModified {
		// Re-verified bytes that are no longer the newest version (it
		// changed between claim and record): the verdict is not about it.
		return false, nil
	}
	if latest != nil && sameVersion(latest, res) {
		// Fresh signature bytes over the same content (an agent that signs
		// on every request): the same version, so no version, diff or
		// index work. The stored bytes stay (their signatures are over the
		// same content); a different verdict is applied to them as for
		// unchanged bytes.
		reverify(r, latest, res, upd, w)
		return false, nil
	}
	var prev *versionRow
	if latest != nil {
		var v versionRow
		if err := tx.Where("agent_id = ? AND seq = ?", r.ID, latest.Seq).Take(&v).Error; err != nil {
			return false, translate(err)
		}
		prev = &v
	}
	trust := res.Trust
	if trust == "" {
		trust = TrustUnsigned
	}
	thumbs := sortedThumbs(res.Thumbprints)
	diff := versionDiff(prev, res.Card, thumbs)
	seq := r.LatestVersionSeq + 1
	fetchedURL := res.FetchedURL
	if fetchedURL == "" {
		fetchedURL = r.CardURL
	}
	w.versions = append(w.versions, versionRow{AgentID: r.ID, Seq: seq, Raw: res.Raw, LegacyRaw: res.LegacyRaw, SHA256: sha, ContentSHA256: res.ContentSHA256,
		FetchedAt: at, FetchedURL: fetchedURL,
		ProtocolVersion: res.ProtocolVersion, Trust: string(trust),
		Verdict:  mustJSON(verdict{Profile: res.Profile, Signatures: nonNil(res.Signatures), Thumbprints: thumbs}),
		Problems: mustJSON(nonNil(res.Problems)), Card: mustJSON(res.Card), Diff: mustJSON(nonNil(diff))})
	if v, ok := viewOf(&w.versions[len(w.versions)-1], res.Card); ok {
		w.views = append(w.views, v)
	}
	upd["latest_version_seq"] = seq
	upd["last_changed_at"] = at
	seen := parseList(r.VerifiedThumbprints)
	if r.CurrentVersionSeq > 0 && Trust(r.Trust) == TrustVerified &&
		(trust != TrustVerified || !slices.ContainsFunc(thumbs, func(t string) bool { return slices.Contains(seen, t) })) {
		// Trust regression (docs/api.md "Curation and visibility", docs/threats.md D.49): never
		// silently replace a verified card.
		upd["candidate_version_seq"] = seq
		upd["needs_review"] = true
		return true, nil
	}
	if trust == TrustVerified {
		upd["verified_thumbprints"] = jsonList(addSeen(seen, thumbs))
	}
	upd["current_version_seq"] = seq
	upd["candidate_version_seq"] = 0
	upd["needs_review"] = false
	upd["trust"] = string(trust)
	upd["name"] = res.Card.Name
	return true, nil
}

// sameVersion is the identity of a version (docs/verification.md): its
// content without `signatures` in RFC 8785 form and the set of keys that
// verify it (with the trust they give). Different bytes with the same
// identity are the same version. With the same content, a verdict that
// cannot be reached now because of the keys (trust error: a key set
// failing, a kid missing) or that verifies again after such an error is a
// verdict about the same version, as it would be for unchanged bytes.
// Anything else — signatures stripped or broken, another key verifying —
// is a new version, so a trust regression is reviewed. Rows recorded
// before the content digest existed, and results without one, compare by
// bytes only.
func sameVersion(latest *versionRow, res FetchResult) bool {
	if latest.ContentSHA256 == "" || res.ContentSHA256 != latest.ContentSHA256 {
		return false
	}
	var old verdict
	_ = json.Unmarshal([]byte(latest.Verdict), &old)
	trust := res.Trust
	if trust == "" {
		trust = TrustUnsigned
	}
	switch {
	case trust == TrustError:
		return true
	case Trust(latest.Trust) == TrustError && trust == TrustVerified:
		return true
	}
	return Trust(latest.Trust) == trust && slices.Equal(sortedThumbs(old.Thumbprints), sortedThumbs(res.Thumbprints))
}

func addSeen(seen, thumbs []string) []string {
	for _, t := range thumbs {
		if !slices.Contains(seen, t) {
			seen = append(seen, t)
		}
	}
	return seen
}

// reverify applies a verdict for the bytes already stored as the newest
// version (docs/threats.md D.52: a key removed from the key set makes the
// card unverifiable on the next crawl after the key cache expires; D.44: a
// key-set failure stored as error recovers once the key set answers). Only
// a different trust or set of verifying keys is a change; the reasons'
// wording may vary from crawl to crawl and is not worth a write.
func reverify(r *agentRow, v *versionRow, res FetchResult, upd map[string]any, w *batchWrites) {
	if res.Trust == "" {
		return
	}
	thumbs := sortedThumbs(res.Thumbprints)
	var old verdict
	_ = json.Unmarshal([]byte(v.Verdict), &old)
	if Trust(v.Trust) == res.Trust && slices.Equal(nonNil(old.Thumbprints), thumbs) {
		return
	}
	w.verdicts = append(w.verdicts, versionVerdict{agentID: r.ID, seq: v.Seq, trust: string(res.Trust),
		verdict: mustJSON(verdict{Profile: res.Profile, Signatures: nonNil(res.Signatures), Thumbprints: thumbs})})
	if v.Seq != r.CurrentVersionSeq {
		// A candidate's verdict is updated for the reviewer to see; which
		// version is current stays an admin's decision (docs/api.md "Curation and visibility").
		return
	}
	upd["trust"] = string(res.Trust)
	if res.Trust == TrustVerified {
		upd["verified_thumbprints"] = jsonList(addSeen(parseList(r.VerifiedThumbprints), thumbs))
	}
}

// versionDiff is agentcard.Diff from the previous version, plus key-changed
// when the keys that verified differ (agentcard compares declared kids
// only). The previous card's signatures, which the stored JSON model
// leaves out, are re-parsed from its stored bytes.
func versionDiff(prev *versionRow, card *agentcard.Card, thumbs []string) []agentcard.Change {
	if prev == nil {
		return nil
	}
	// The stored card is Cardex's view of the version (for a verified
	// card, what its signature covers: docs/verification.md); its
	// signatures come from the stored bytes.
	old := &agentcard.Card{}
	stored := json.Unmarshal([]byte(prev.Card), old) == nil && prev.Card != "null"
	if p, err := agentcard.Parse(prev.Raw, agentcard.Options{CardURL: prev.FetchedURL}); err == nil {
		if stored {
			old.Signatures = p.Card.Signatures
		} else {
			old = p.Card
		}
	}
	diff := agentcard.Diff(old, card)
	var pv verdict
	_ = json.Unmarshal([]byte(prev.Verdict), &pv)
	oldThumbs := nonNil(pv.Thumbprints)
	if !slices.Equal(oldThumbs, thumbs) {
		diff = append(diff, agentcard.Change{Kind: agentcard.ChangeKey, Path: "/signatures/thumbprints", Old: oldThumbs, New: thumbs})
	}
	return diff
}
