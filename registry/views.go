package registry

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/cardexhq/cardex/agentcard"
)

// Stored views (migrations 00110, 00111). Decoding a stored card and
// rendering it again was most of what a search page cost outside the
// index: each version's view (agentcard.ViewJSON) is rendered once, when
// the version is stored, and ListedViews hands it out as bytes. A
// version's card never changes, so its view is as current as the version;
// a view of another revision than agentcard.ViewRevision is ignored, and
// the card is decoded as before until RenderViews replaces it. The view
// row also carries the version's verdict and problems, so a listing reads
// one small row per agent besides the agent's own; the verdict, the one
// part of a version that changes (keys change), is written to both tables
// by flush.

// CardView is a version's card as listings show it: JSON is what
// agentcard.Card.ViewJSON wrote for it (never nil in a CardView), Shape
// and ProtocolVersions are the card's, and Problems is the version's
// problems as encoding/json writes a []agentcard.Problem (never nil; an
// agent listed with a CardView has a nil Agent.Problems). Callers must
// not modify JSON or Problems. ListedSummaries hands out CardViews with
// only Summary, Shape and ProtocolVersions.
type CardView struct {
	JSON             []byte
	Shape            string
	ProtocolVersions []string
	Problems         []byte
	// Summary is the card's summary as agentcard.Card.SummaryJSON writes
	// it (at most agentcard.MaxSummaryBytes).
	Summary []byte
}

// viewOf is the view row of version v with card c, false for a version
// without a card or one that does not render.
func viewOf(v *versionRow, c *agentcard.Card) (viewRow, bool) {
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
	sum, err := c.SummaryJSON()
	if err != nil {
		return viewRow{}, false
	}
	return viewRow{AgentID: v.AgentID, Seq: v.Seq, Rev: agentcard.ViewRevision, Rendered: b, Shape: c.Shape,
		ProtocolVersions: string(pvs), Verdict: v.Verdict, Problems: v.Problems, Summary: sum}, true
}

// encodedProblems is a version's stored problems as encoding/json writes
// a []agentcard.Problem now (listings copy them as they are), false when
// they do not decode. A version stored now holds exactly that
// (maybeAddVersion); one stored by an older release may not.
func encodedProblems(stored string) (string, bool) {
	var ps []agentcard.Problem
	if err := json.Unmarshal([]byte(stored), &ps); err != nil {
		return "", false
	}
	b, err := json.Marshal(nonNil(ps))
	return string(b), err == nil
}

// cardView turns a stored view's columns into a CardView.
func cardView(w *viewRow) *CardView {
	v := &CardView{JSON: w.Rendered, Shape: w.Shape, Problems: []byte(w.Problems), Summary: w.Summary}
	if w.ProtocolVersions != "" && w.ProtocolVersions != "[]" {
		_ = json.Unmarshal([]byte(w.ProtocolVersions), &v.ProtocolVersions)
	}
	return v
}

// renderViewsBatch is how many versions one RenderViews transaction
// renders (a variable for the tests).
var renderViewsBatch = 256

// RenderViews stores the views that current versions lack at this
// revision (versions stored before views existed, or by a release that
// rendered them otherwise), a batch per transaction, and returns how many
// it stored. Listings are right meanwhile: they read the version of an
// agent without a view. Replicas may run it at once; a view is the same
// whoever renders it.
func (s *Service) RenderViews(ctx context.Context) (int, error) {
	total := 0
	after := ""
	for {
		n, last, err := s.renderViewsAfter(ctx, after)
		total += n
		if err != nil || last == "" {
			return total, err
		}
		after = last
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// renderViewsAfter renders the missing views of up to renderViewsBatch
// agents after agent id after, in keyset order over agents' primary key
// (so a card that does not render is passed over rather than read again),
// and returns how many it stored and the last agent id it read ("" when
// none was left). The versions lacking a view are found through the read
// pool, so a start-up with every view in place takes no write lock (the
// walk takes about 0.4 s at 100,000 agents). They are read again in the
// transaction that stores their views, locked on PostgreSQL: a verdict
// changed meanwhile by another replica waits for the view and then
// updates it too (flush).
func (s *Service) renderViewsAfter(ctx context.Context, after string) (stored int, last string, err error) {
	var keys []struct {
		AgentID string
		Seq     int64
	}
	err = s.store.read(ctx).Raw(`SELECT v.agent_id, v.seq FROM agents a
		JOIN card_versions v ON v.agent_id = a.id AND v.seq = a.current_version_seq
		LEFT JOIN card_views w ON w.agent_id = v.agent_id AND w.seq = v.seq AND w.rev = ?
		WHERE a.id > ? AND w.agent_id IS NULL ORDER BY a.id LIMIT ?`,
		agentcard.ViewRevision, after, renderViewsBatch).Scan(&keys).Error
	if err != nil {
		return 0, "", translate(err)
	}
	if len(keys) == 0 {
		return 0, "", nil
	}
	last = keys[len(keys)-1].AgentID
	pairs := make([][]any, len(keys))
	for i, k := range keys {
		pairs[i] = []any{k.AgentID, k.Seq}
	}
	q := `SELECT v.agent_id, v.seq, v.verdict, v.problems, v.card FROM card_versions v
		LEFT JOIN card_views w ON w.agent_id = v.agent_id AND w.seq = v.seq AND w.rev = ?
		WHERE (v.agent_id, v.seq) IN ? AND w.agent_id IS NULL`
	if s.store.dialect == DialectPostgres {
		q += " FOR UPDATE OF v"
	}
	err = s.store.tx(ctx, func(tx *gorm.DB) error {
		var rows []versionRow
		if err := tx.Raw(q, agentcard.ViewRevision, pairs).Scan(&rows).Error; err != nil {
			return err
		}
		views := make([]viewRow, 0, len(rows))
		for i := range rows {
			r := &rows[i]
			var c agentcard.Card
			if r.Card == "" || r.Card == "null" || json.Unmarshal([]byte(r.Card), &c) != nil {
				continue
			}
			var ok bool
			if r.Problems, ok = encodedProblems(r.Problems); !ok {
				continue
			}
			if v, ok := viewOf(r, &c); ok {
				views = append(views, v)
			}
		}
		if len(views) == 0 {
			return nil
		}
		stored = len(views)
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "agent_id"}, {Name: "seq"}},
			DoUpdates: clause.AssignmentColumns([]string{"rev", "rendered", "shape", "protocol_versions", "verdict", "problems", "summary"}),
		}).Create(&views).Error
	})
	if err != nil {
		return 0, "", err
	}
	return stored, last, nil
}
