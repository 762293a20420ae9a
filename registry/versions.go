package registry

import (
	"context"
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
	a, err := s.readable(ctx, p, id)
	if err != nil {
		return nil, "", err
	}
	if a.CurrentVersionSeq == 0 {
		return nil, "", ErrNotFound
	}
	var v versionRow
	if err := s.store.read(ctx).Select("raw, sha256").Where("agent_id = ? AND seq = ?", id, a.CurrentVersionSeq).Take(&v).Error; err != nil {
		return nil, "", translate(err)
	}
	return v.Raw, v.SHA256, nil
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
	return &out, nil
}
