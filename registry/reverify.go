package registry

import (
	"context"
	"slices"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// StoredVersion is a stored version to judge again from its bytes
// (migrations 00170; docs/verification.md "Members a profile leaves
// unsigned"): what the crawler needs to parse and verify it as it would a
// fetched card.
type StoredVersion struct {
	AgentID    string
	Seq        int64
	CardURL    string // the agent's; its origin binds the key sources
	FetchedURL string // the version's
	Raw        []byte
	PinnedKeys []byte // the agent's pinned JWKS, nil when none
}

// StoredToReverify returns up to limit versions marked to be judged again,
// in (agent, seq) order after the given key (""/0 from the start).
func (s *Service) StoredToReverify(ctx context.Context, afterAgent string, afterSeq int64, limit int) ([]StoredVersion, error) {
	var rows []struct {
		AgentID    string
		Seq        int64
		CardURL    string
		FetchedURL string
		Raw        []byte
		PinnedKeys *string
	}
	err := s.store.read(ctx).Raw(`SELECT v.agent_id, v.seq, a.card_url, v.fetched_url, v.raw, a.pinned_keys
		FROM card_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.reverify AND (v.agent_id > ? OR (v.agent_id = ? AND v.seq > ?))
		ORDER BY v.agent_id, v.seq LIMIT ?`, afterAgent, afterAgent, afterSeq, limit).Scan(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]StoredVersion, len(rows))
	for i, r := range rows {
		out[i] = StoredVersion{AgentID: r.AgentID, Seq: r.Seq, CardURL: r.CardURL, FetchedURL: r.FetchedURL, Raw: r.Raw}
		if r.PinnedKeys != nil {
			out[i].PinnedKeys = []byte(*r.PinnedKeys)
		}
	}
	return out, nil
}

// ApplyReverify stores the new judgement of a stored version (res carries
// Trust, Profile, Signatures, Thumbprints, Card — Cardex's view of the
// card — Problems, ProtocolVersion and, when the view needs one, LegacyRaw)
// and clears its mark. The version's verdict, card and listing view are
// replaced in place: the bytes are the same, only the judgement of them
// changed. For the agent:
//
//   - the current version's trust becomes the agent's;
//   - a candidate (a trust regression under the earlier rule) that is now
//     verified by a key that verified the agent before, or whose agent is
//     not verified, becomes current, as it would have when it was fetched
//     (docs/api.md "Curation and visibility");
//
// and the change log gets a `trust` entry when the version's trust
// changed. A result with trust `error` (a key set that did not answer)
// leaves the mark for the next start. An unknown agent or version, or one
// no longer marked, is left alone.
func (s *Service) ApplyReverify(ctx context.Context, v StoredVersion, res FetchResult) error {
	if res.Trust == TrustError || res.Trust == "" {
		return nil
	}
	now := s.now()
	return s.store.tx(ctx, func(tx *gorm.DB) error {
		rows, err := s.lockAgents(tx, []string{v.AgentID})
		if err != nil {
			return err
		}
		r := rows[v.AgentID]
		if r == nil {
			return nil
		}
		var cur versionRow
		if err := tx.Where("agent_id = ? AND seq = ?", v.AgentID, v.Seq).Take(&cur).Error; err != nil {
			if translate(err) == ErrNotFound {
				return nil
			}
			return translate(err)
		}
		if !cur.Reverify {
			return nil
		}
		thumbs := sortedThumbs(res.Thumbprints)
		cur.Trust = string(res.Trust)
		cur.Verdict = mustJSON(verdict{Profile: res.Profile, Signatures: nonNil(res.Signatures), Thumbprints: thumbs})
		upd := map[string]any{"trust": cur.Trust, "verdict": cur.Verdict, "reverify": false}
		if res.Card != nil {
			cur.Card = mustJSON(res.Card)
			upd["card"] = cur.Card
			if res.ProtocolVersion != "" {
				upd["protocol_version"] = res.ProtocolVersion
			}
			if res.Problems != nil {
				cur.Problems = mustJSON(res.Problems)
				upd["problems"] = cur.Problems
			}
			if res.LegacyRaw != nil && cur.LegacyRaw == nil {
				upd["legacy_raw"] = res.LegacyRaw
			}
		}
		if err := tx.Model(&versionRow{}).Where("agent_id = ? AND seq = ?", v.AgentID, v.Seq).Updates(upd).Error; err != nil {
			return err
		}
		if res.Card != nil {
			if view, ok := viewOf(&cur, res.Card); ok {
				if err := tx.Clauses(clause.OnConflict{
					Columns:   []clause.Column{{Name: "agent_id"}, {Name: "seq"}},
					DoUpdates: clause.AssignmentColumns([]string{"rev", "rendered", "shape", "protocol_versions", "verdict", "problems"}),
				}).Create(&view).Error; err != nil {
					return err
				}
			}
		}
		agent := map[string]any{}
		seen := parseList(r.VerifiedThumbprints)
		switch {
		case v.Seq == r.CurrentVersionSeq:
			agent["trust"] = cur.Trust
		case v.Seq == r.CandidateVersionSeq && res.Trust == TrustVerified &&
			(Trust(r.Trust) != TrustVerified || slices.ContainsFunc(thumbs, func(t string) bool { return slices.Contains(seen, t) })):
			agent["current_version_seq"] = v.Seq
			agent["candidate_version_seq"] = 0
			agent["needs_review"] = false
			agent["trust"] = cur.Trust
		}
		if _, ok := agent["trust"]; ok {
			if res.Trust == TrustVerified {
				agent["verified_thumbprints"] = jsonList(addSeen(seen, thumbs))
			}
			if res.Card != nil && res.Card.Name != "" {
				agent["name"] = res.Card.Name
			}
		}
		w := &batchWrites{}
		if len(agent) > 0 {
			agent["updated_at"] = now
			w.agents = append(w.agents, agentUpdate{id: r.ID, cols: agent})
		}
		// One change-log entry per re-judged version: the indexer and
		// mirrors read the agent again (its view may have changed even when
		// the agent's trust did not).
		// Who lists the agent is as it was (visibility.go reach).
		listed := r.audience()
		w.changes = append(w.changes, changeOf(r.ID, ChangeTrust, now, &listed, listed))
		return s.flush(tx, w)
	})
}
