package registry

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/cardexhq/cardex/agentcard"
)

// Stored views (migration 00110). Decoding a stored card and rendering it
// again was most of what a search page cost outside the index: each
// version's view (agentcard.ViewJSON) is rendered once, when the version
// is stored, and ListedViews hands it out as bytes. A version's card never
// changes, so its view is as current as the version; a view of another
// revision than agentcard.ViewRevision is ignored, and the card is decoded
// as before until RenderViews replaces it.

// CardView is a version's card as listings show it: JSON is what
// agentcard.Card.ViewJSON wrote for it (never nil in a CardView), Shape
// and ProtocolVersions are the card's. Callers must not modify JSON.
type CardView struct {
	JSON             []byte
	Shape            string
	ProtocolVersions []string
}

// viewOf is the view row of version seq of agent id, false for a version
// without a card or one that does not render.
func viewOf(id string, seq int64, c *agentcard.Card) (viewRow, bool) {
	if c == nil {
		return viewRow{}, false
	}
	b, err := c.ViewJSON()
	if err != nil {
		return viewRow{}, false
	}
	pvs, err := json.Marshal(nonNil(c.ProtocolVersions))
	if err != nil {
		return viewRow{}, false
	}
	return viewRow{AgentID: id, Seq: seq, Rev: agentcard.ViewRevision, Rendered: b, Shape: c.Shape, ProtocolVersions: string(pvs)}, true
}

// cardView turns a stored view's columns into a CardView.
func cardView(rendered []byte, shape, pvs string) *CardView {
	v := &CardView{JSON: rendered, Shape: shape}
	if pvs != "" && pvs != "[]" {
		_ = json.Unmarshal([]byte(pvs), &v.ProtocolVersions)
	}
	return v
}

// renderViewsBatch is how many versions one RenderViews transaction
// renders (a variable for the tests).
var renderViewsBatch = 256

// RenderViews stores the views that current versions lack at this
// revision (versions stored before views existed, or by a release that
// rendered them otherwise), a batch per transaction, and returns how many
// it stored. Listings are right meanwhile: they decode the card of a
// version without a view. Replicas may run it at once; a view is the same
// whoever renders it.
func (s *Service) RenderViews(ctx context.Context) (int, error) {
	total := 0
	after := ""
	for {
		var rows []struct {
			AgentID string
			Seq     int64
			Card    string
		}
		// Keyset order over agents' primary key, so each batch starts
		// where the last ended and a card that does not render is passed
		// over rather than read again.
		err := s.store.read(ctx).Raw(`SELECT v.agent_id, v.seq, v.card FROM agents a
			JOIN card_versions v ON v.agent_id = a.id AND v.seq = a.current_version_seq
			LEFT JOIN card_views w ON w.agent_id = v.agent_id AND w.seq = v.seq AND w.rev = ?
			WHERE a.id > ? AND w.agent_id IS NULL ORDER BY a.id LIMIT ?`,
			agentcard.ViewRevision, after, renderViewsBatch).Scan(&rows).Error
		if err != nil {
			return total, translate(err)
		}
		if len(rows) == 0 {
			return total, nil
		}
		after = rows[len(rows)-1].AgentID
		views := make([]viewRow, 0, len(rows))
		for _, r := range rows {
			var c agentcard.Card
			if r.Card == "" || r.Card == "null" || json.Unmarshal([]byte(r.Card), &c) != nil {
				continue
			}
			if v, ok := viewOf(r.AgentID, r.Seq, &c); ok {
				views = append(views, v)
			}
		}
		if len(views) > 0 {
			err := s.store.tx(ctx, func(tx *gorm.DB) error {
				return tx.Clauses(clause.OnConflict{
					Columns:   []clause.Column{{Name: "agent_id"}, {Name: "seq"}},
					DoUpdates: clause.AssignmentColumns([]string{"rev", "rendered", "shape", "protocol_versions"}),
				}).Create(&views).Error
			})
			if err != nil {
				return total, err
			}
			total += len(views)
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
