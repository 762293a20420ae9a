package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/cardexhq/cardex/registry/agentcard"
	"gorm.io/gorm"
)

// RecordFetch stores one crawl result for an agent owner has leased, in one
// transaction with its change-log rows (DESIGN.md principle 2):
//
//   - an error keeps the last good card, records lastError, the attempt and
//     the back-off counters; health becomes failing, or gone after 3
//     consecutive 404/410 or when failing for GoneAfter (DESIGN.md crawl
//     policy);
//   - a 304, or a 200 with the bytes of the newest stored version, is
//     "unchanged": validators and last_fetched_at move, nothing else;
//   - new bytes make a new version (RELIABILITY.md C.38: never updated in
//     place) with its diff from the previous one. It becomes current, even
//     for an approved agent (approval is of the agent, CONTRACT.md §4),
//     unless it is a trust regression of a verified agent (D.49): then the
//     verified version stays current, the new one is the candidate and the
//     agent needsReview.
//
// Change kinds written: changed (a version was added), health, trust (the
// agent's values changed). No `fetched` row is written for unchanged
// results, so the 304 path adds nothing to the change log. updated_at moves
// only with those changes.
//
// The lease guards the write: when the agent was removed (remove drops the
// lease) or its lease is now someone else's, nothing is written and the
// answer is ErrLeaseLost (RELIABILITY.md F.64). The lease is cleared and
// next_fetch_at set to res.NextFetchAt.
func (s *Service) RecordFetch(ctx context.Context, owner, agentID string, res FetchResult) error {
	ok := res.Attempt.ErrorClass == "" && !res.NotModified
	if ok && res.Card == nil {
		return invalidField("/card", "required", "a successful fetch carries the parsed card")
	}
	now := s.now()
	at := utc(res.Attempt.At)
	if res.Attempt.At.IsZero() {
		at = now
	}
	next := utc(res.NextFetchAt)
	if res.NextFetchAt.IsZero() {
		next = at.Add(time.Hour)
	}
	return s.store.tx(ctx, func(tx *gorm.DB) error {
		r, err := s.lockAgent(tx, agentID)
		if err != nil {
			return err
		}
		if owner == "" || r.LeaseOwner != owner || Status(r.Status) == StatusRemoved {
			return ErrLeaseLost
		}
		upd := map[string]any{"lease_owner": "", "lease_until": nil, "next_fetch_at": next, "last_fetched_at": at}
		var result string
		var kinds []string
		health := HealthOK
		switch {
		case res.Attempt.ErrorClass != "":
			result = ResultError
			health = s.recordFailure(r, res, at, upd)
		default:
			recordSuccess(r, res, at, upd)
			result = ResultUnchanged
			if !res.NotModified {
				added, err := s.maybeAddVersion(tx, r, res, at, upd)
				if err != nil {
					return err
				}
				if added {
					result = ResultNewVersion
					kinds = append(kinds, ChangeChanged)
				}
			}
		}
		upd["health"] = string(health)
		if health != Health(r.Health) {
			kinds = append(kinds, ChangeHealth)
		}
		if t, ok := upd["trust"]; ok && Trust(t.(string)) != Trust(r.Trust) {
			kinds = append(kinds, ChangeTrust)
		}
		if len(kinds) > 0 {
			upd["updated_at"] = now
		}
		if err := tx.Model(&agentRow{}).Where("id = ?", agentID).Updates(upd).Error; err != nil {
			return err
		}
		if err := s.addAttempt(tx, agentID, res.Attempt, result, at); err != nil {
			return err
		}
		for _, k := range kinds {
			if err := s.addChange(tx, agentID, k, now); err != nil {
				return err
			}
		}
		return nil
	})
}

func isMissing(a FetchAttempt) bool { return a.HTTPStatus == 404 || a.HTTPStatus == 410 }

// goneAfterMissing is how many consecutive 404/410 answers withdraw an
// agent (DESIGN.md: the card withdrawn from the host leaves the catalogue).
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
	if missing >= goneAfterMissing || at.Sub(failingSince) >= s.cfg.GoneAfter {
		return HealthGone
	}
	return HealthFailing
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

// maybeAddVersion stores res as a new version when its bytes differ from
// the newest stored version, and decides whether it becomes current.
func (s *Service) maybeAddVersion(tx *gorm.DB, r *agentRow, res FetchResult, at time.Time, upd map[string]any) (bool, error) {
	sum := sha256.Sum256(res.Raw)
	sha := hex.EncodeToString(sum[:])
	var prev *versionRow
	if r.LatestVersionSeq > 0 {
		var v versionRow
		if err := tx.Where("agent_id = ? AND seq = ?", r.ID, r.LatestVersionSeq).Take(&v).Error; err != nil {
			return false, translate(err)
		}
		if v.SHA256 == sha {
			return false, nil
		}
		prev = &v
	}
	trust := res.Trust
	if trust == "" {
		trust = TrustUnsigned
	}
	thumbs := slices.Clone(res.Thumbprints)
	slices.Sort(thumbs)
	thumbs = slices.Compact(thumbs)
	if thumbs == nil {
		thumbs = []string{}
	}
	diff := versionDiff(prev, res.Card, thumbs)
	seq := r.LatestVersionSeq + 1
	fetchedURL := res.FetchedURL
	if fetchedURL == "" {
		fetchedURL = r.CardURL
	}
	row := versionRow{AgentID: r.ID, Seq: seq, Raw: res.Raw, SHA256: sha, FetchedAt: at, FetchedURL: fetchedURL,
		ProtocolVersion: res.ProtocolVersion, Trust: string(trust),
		Verdict:  mustJSON(verdict{Profile: res.Profile, Signatures: nonNil(res.Signatures), Thumbprints: thumbs}),
		Problems: mustJSON(nonNil(res.Problems)), Card: mustJSON(res.Card), Diff: mustJSON(nonNil(diff))}
	if err := tx.Create(&row).Error; err != nil {
		return false, err
	}
	upd["latest_version_seq"] = seq
	upd["last_changed_at"] = at
	seen := parseList(r.VerifiedThumbprints)
	if r.CurrentVersionSeq > 0 && Trust(r.Trust) == TrustVerified &&
		(trust != TrustVerified || !slices.ContainsFunc(thumbs, func(t string) bool { return slices.Contains(seen, t) })) {
		// Trust regression (CONTRACT.md §4, RELIABILITY.md D.49): never
		// silently replace a verified card.
		upd["candidate_version_seq"] = seq
		upd["needs_review"] = true
		return true, nil
	}
	if trust == TrustVerified {
		for _, t := range thumbs {
			if !slices.Contains(seen, t) {
				seen = append(seen, t)
			}
		}
		upd["verified_thumbprints"] = jsonList(seen)
	}
	upd["current_version_seq"] = seq
	upd["candidate_version_seq"] = 0
	upd["needs_review"] = false
	upd["trust"] = string(trust)
	upd["name"] = res.Card.Name
	return true, nil
}

// versionDiff is agentcard.Diff from the previous version, plus key-changed
// when the keys that verified differ (agentcard compares declared kids
// only). The previous card is re-parsed from its stored bytes so the diff
// sees its signatures, which the stored JSON model leaves out.
func versionDiff(prev *versionRow, card *agentcard.Card, thumbs []string) []agentcard.Change {
	if prev == nil {
		return nil
	}
	var old *agentcard.Card
	if p, err := agentcard.Parse(prev.Raw, agentcard.Options{CardURL: prev.FetchedURL}); err == nil {
		old = p.Card
	} else {
		old = &agentcard.Card{}
		_ = json.Unmarshal([]byte(prev.Card), old)
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

func (s *Service) addAttempt(tx *gorm.DB, agentID string, a FetchAttempt, result string, at time.Time) error {
	ms := a.DurationMS
	if ms == 0 {
		ms = a.Duration.Milliseconds()
	}
	row := fetchRow{AgentID: agentID, At: at, URL: a.URL, HTTPStatus: a.HTTPStatus, DurationMS: ms, Bytes: a.Bytes,
		ErrorClass: a.ErrorClass, Message: cleanMessage(a.Message), Result: result}
	if err := tx.Create(&row).Error; err != nil {
		return err
	}
	return tx.Exec(`DELETE FROM fetch_attempts WHERE agent_id = ? AND id < (
		SELECT MIN(id) FROM (SELECT id FROM fetch_attempts WHERE agent_id = ? ORDER BY id DESC LIMIT ?) k)`,
		agentID, agentID, s.cfg.KeepFetchAttempts).Error
}

// cleanMessage makes a fetched error message safe to store and show
// (RELIABILITY.md I.81): valid UTF-8, no control characters (CR/LF, ANSI
// escapes), at most 1024 bytes.
func cleanMessage(m string) string {
	m = strings.ToValidUTF8(m, "\uFFFD")
	m = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, m)
	if len(m) > 1024 {
		m = strings.ToValidUTF8(m[:1024], "")
	}
	return m
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
