package registry

import (
	"context"
	"encoding/json"

	"github.com/cardexhq/cardex/agentcard"
	"gorm.io/gorm"
)

// versionSummaryCols are the card_versions columns a version summary needs;
// the raw bytes stay on disk unless the card itself is asked for.
const versionSummaryCols = "agent_id, seq, sha256, fetched_at, fetched_url, protocol_version, trust, verdict, problems, card, diff"

// versionRecordCols are the card_versions columns an agent's record needs
// (toAgent).
const versionRecordCols = "agent_id, seq, verdict, problems, card"

func loadAgentRow(db *gorm.DB, id string) (*agentRow, error) {
	var r agentRow
	if err := db.Where("id = ?", id).Take(&r).Error; err != nil {
		return nil, translate(err)
	}
	return &r, nil
}

// toAgent builds the record of docs/api.md from the row and its current
// version (nil before the first fetch).
// Listed reads only the columns named in listedSQLText (list.go): a column
// read here must be read there too.
func toAgent(r *agentRow, cur *versionRow) Agent {
	a := Agent{
		ID: r.ID, CardURL: r.CardURL, FetchedURL: r.FetchedURL, Host: r.Host,
		Status: Status(r.Status), Visibility: Visibility(r.Visibility), Groups: decodeGroups(r.VisibleGroups), Health: Health(r.Health),
		Trust: Trust(r.Trust), NeedsReview: r.NeedsReview,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		LastFetchedAt: utcPtr(r.LastFetchedAt), LastChangedAt: utcPtr(r.LastChangedAt),
		VersionSeq:    r.CurrentVersionSeq,
		LastSuccessAt: utcPtr(r.LastSuccessAt), FailingSince: utcPtr(r.FailingSince), ConsecutiveFailures: r.ConsecutiveFailures,
		Signatures: []SignatureResult{}, Problems: []agentcard.Problem{},
		Liveness: livenessOf(r),
		Catalog:  r.CatalogURL, CatalogInline: r.CatalogCard != nil, CatalogMissing: r.CatalogMissing,
		CatalogQueries: decodeQueries(r.CatalogQueries), AutoApproveHeld: r.AutoApproveHeld,
		CatalogSource: decodeSource(r.CatalogSource, r.CatalogIdentifier),
	}
	if Status(r.Status) != StatusRemoved && Status(r.Status) != StatusRejected {
		a.NextFetchAt = utcPtr(&r.NextFetchAt)
	}
	if r.LastErrorAt != nil {
		a.LastError = &FetchError{At: r.LastErrorAt.UTC(), Class: r.LastErrorClass, HTTPStatus: r.LastErrorStatus, Message: r.LastErrorMessage}
	}
	if cur != nil {
		if cur.Card != "" && cur.Card != "null" {
			var c agentcard.Card
			if json.Unmarshal([]byte(cur.Card), &c) == nil {
				a.Card = &c
			}
		}
		var v verdict
		if json.Unmarshal([]byte(cur.Verdict), &v) == nil && v.Signatures != nil {
			a.Signatures = v.Signatures
			a.NotCovered = v.notCovered()
		}
		var ps []agentcard.Problem
		if json.Unmarshal([]byte(cur.Problems), &ps) == nil && ps != nil {
			a.Problems = ps
		}
	}
	return a
}

// hydrate turns rows into records, loading their current versions in one
// query.
func hydrate(db *gorm.DB, rows []agentRow) ([]Agent, error) {
	var ids []string
	var seqs []int64
	for _, r := range rows {
		if r.CurrentVersionSeq > 0 {
			ids = append(ids, r.ID)
			seqs = append(seqs, r.CurrentVersionSeq)
		}
	}
	type key struct {
		id  string
		seq int64
	}
	cur := map[key]*versionRow{}
	if len(ids) > 0 {
		var vs []versionRow
		if err := db.Select(versionRecordCols).Where("agent_id IN ? AND seq IN ?", ids, seqs).Find(&vs).Error; err != nil {
			return nil, translate(err)
		}
		for i := range vs {
			cur[key{vs[i].AgentID, vs[i].Seq}] = &vs[i]
		}
	}
	out := make([]Agent, len(rows))
	for i := range rows {
		out[i] = toAgent(&rows[i], cur[key{rows[i].ID, rows[i].CurrentVersionSeq}])
	}
	return out, nil
}

// agentRecord is the full record of one agent as p may see it.
func (s *Service) agentRecord(db *gorm.DB, p Principal, r *agentRow) (*Agent, error) {
	return s.record(db, p, r, true)
}

// record is agentRecord, with the liveness detail read only when probes
// may exist: a row created by this very request has none.
func (s *Service) record(db *gorm.DB, p Principal, r *agentRow, probed bool) (*Agent, error) {
	as, err := hydrate(db, []agentRow{*r})
	if err != nil {
		return nil, err
	}
	if !probed {
		noProbes(as[0].Liveness)
	} else if err := s.livenessDetail(db, r.ID, as[0].Liveness); err != nil {
		return nil, err
	}
	redactAgent(p, &as[0])
	return &as[0], nil
}

// Get returns one agent's record to whoever holds its id (docs/api.md "Agent identity");
// removed agents answer ErrNotFound to everyone but admins.
func (s *Service) Get(ctx context.Context, p Principal, id string) (*Agent, error) {
	db := s.store.read(ctx)
	r, err := loadAgentRow(db, id)
	if err != nil {
		return nil, err
	}
	if !p.canRead(r) {
		return nil, ErrNotFound
	}
	return s.agentRecord(db, p, r)
}

// readable loads the agent p may read, or ErrNotFound.
func (s *Service) readable(ctx context.Context, p Principal, id string) (*agentRow, error) {
	r, err := loadAgentRow(s.store.read(ctx), id)
	if err != nil {
		return nil, err
	}
	if !p.canRead(r) {
		return nil, ErrNotFound
	}
	return r, nil
}
