package registry

import (
	"context"
)

// IndexSource is the registry as a search index follows it: the whole
// change log and every agent's current state, with no visibility filter —
// the index stores status, health and visibility and filters per viewer
// itself, and callers re-check visibility against SQL when they hydrate hits
// (docs/threats.md G.72). It satisfies search.Source.
type IndexSource struct{ store *Store }

// IndexSource returns the unfiltered view the search indexer follows.
func (s *Service) IndexSource() IndexSource { return IndexSource{store: s.store} }

// Changes returns at most limit change-log entries after seq `after`, oldest
// first, and the seq to continue after.
func (x IndexSource) Changes(ctx context.Context, after int64, limit int) ([]Change, int64, error) {
	return x.store.changesAfter(ctx, after, clampLimit(limit))
}

// LatestSeq is the newest change-log seq, 0 when empty.
func (x IndexSource) LatestSeq(ctx context.Context) (int64, error) {
	return x.store.LatestChange(ctx)
}

// Agents returns the current records of the agents with these ids, removed
// ones included; unknown ids are simply absent.
func (x IndexSource) Agents(ctx context.Context, ids []string) ([]Agent, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	db := x.store.read(ctx)
	var rows []agentRow
	if err := db.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return hydrate(db, rows)
}

// ListAgents pages through every agent in ascending id order, after afterID
// ("" for the first page).
func (x IndexSource) ListAgents(ctx context.Context, afterID string, limit int) ([]Agent, error) {
	db := x.store.read(ctx)
	var rows []agentRow
	if err := db.Where("id > ?", afterID).Order("id ASC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	return hydrate(db, rows)
}

// changesAfter reads the change log unfiltered.
func (s *Store) changesAfter(ctx context.Context, after int64, limit int) ([]Change, int64, error) {
	var rows []changeRow
	err := s.read(ctx).Where("seq > ?", after).Order("seq ASC").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, after, translate(err)
	}
	out := make([]Change, len(rows))
	next := after
	for i, r := range rows {
		out[i] = Change{Seq: r.Seq, AgentID: r.AgentID, Kind: r.Kind, At: r.At.UTC()}
		next = r.Seq
	}
	return out, next, nil
}
