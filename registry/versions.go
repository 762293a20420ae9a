package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/cardexhq/cardex/agentcard"
)

func toVersion(a *agentRow, v *versionRow) Version {
	out := Version{
		Seq: v.Seq, SHA256: v.SHA256, FetchedAt: v.FetchedAt.UTC(), FetchedURL: v.FetchedURL,
		ProtocolVersion: v.ProtocolVersion, Trust: Trust(v.Trust),
		Current: v.Seq == a.CurrentVersionSeq, Candidate: v.Seq == a.CandidateVersionSeq,
		Diff: []agentcard.Change{}, Signatures: []SignatureResult{}, Thumbprints: []string{}, Problems: []agentcard.Problem{},
		Raw: v.Raw,
	}
	var vd verdict
	if json.Unmarshal([]byte(v.Verdict), &vd) == nil {
		out.Profile = vd.Profile
		if vd.Signatures != nil {
			out.Signatures = vd.Signatures
		}
		if vd.Thumbprints != nil {
			out.Thumbprints = vd.Thumbprints
		}
	}
	var d []agentcard.Change
	if json.Unmarshal([]byte(v.Diff), &d) == nil && d != nil {
		out.Diff = d
	}
	var ps []agentcard.Problem
	if json.Unmarshal([]byte(v.Problems), &ps) == nil && ps != nil {
		out.Problems = ps
	}
	return out
}

// Card returns the current version's bytes exactly as fetched and their
// SHA-256 (for the ETag). ErrNotFound before the first fetch.
func (s *Service) Card(ctx context.Context, p Principal, id string) ([]byte, string, error) {
	raw, sum, _, err := s.CardRendering(ctx, p, id, false)
	return raw, sum, err
}

// CardRendering is Card for a client of a protocol version: with v03, the
// agent's own v0.3 rendering of the current version when it served one
// (FetchResult.LegacyRaw), else the bytes Card returns. legacy reports
// which was returned; sum is the hex SHA-256 of the bytes returned.
func (s *Service) CardRendering(ctx context.Context, p Principal, id string, v03 bool) (raw []byte, sum string, legacy bool, err error) {
	a, err := s.readable(ctx, p, id)
	if err != nil {
		return nil, "", false, err
	}
	if a.CurrentVersionSeq == 0 {
		return nil, "", false, ErrNotFound
	}
	var v versionRow
	if err := s.store.read(ctx).Select("raw, sha256, legacy_raw").Where("agent_id = ? AND seq = ?", id, a.CurrentVersionSeq).Take(&v).Error; err != nil {
		return nil, "", false, translate(err)
	}
	if v03 && len(v.LegacyRaw) > 0 {
		h := sha256.Sum256(v.LegacyRaw)
		return v.LegacyRaw, hex.EncodeToString(h[:]), true, nil
	}
	return v.Raw, v.SHA256, false, nil
}

// Versions lists every stored version, newest first, without raw bytes.
func (s *Service) Versions(ctx context.Context, p Principal, id string) ([]Version, error) {
	a, err := s.readable(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var rows []versionRow
	if err := s.store.read(ctx).Select(versionSummaryCols).Where("agent_id = ?", id).Order("seq DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]Version, len(rows))
	for i := range rows {
		out[i] = toVersion(a, &rows[i])
		redactVersion(p, &out[i])
	}
	return out, nil
}

// Version returns one version with its raw bytes.
func (s *Service) Version(ctx context.Context, p Principal, id string, seq int64) (*Version, error) {
	a, err := s.readable(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var v versionRow
	if err := s.store.read(ctx).Where("agent_id = ? AND seq = ?", id, seq).Take(&v).Error; err != nil {
		return nil, translate(err)
	}
	out := toVersion(a, &v)
	redactVersion(p, &out)
	return &out, nil
}
