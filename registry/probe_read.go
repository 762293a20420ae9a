package registry

import (
	"context"
	"encoding/base64"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// Probe history sizes (GET /api/v1/agents/{id}/probes).
const (
	defaultProbePage = 50
	maxProbePage     = 500
)

// uptimeStripDays is how many daily roll-ups the record carries (the
// agent page's 30-day strip).
const uptimeStripDays = 30

// noProbes fills the one-agent parts of l as livenessDetail does for an
// agent with no probe yet: empty lists, no uptime.
func noProbes(l *Liveness) {
	l.Interfaces, l.Days, l.Uptime = []InterfaceLiveness{}, []UptimeDay{}, &Uptime{}
}

// livenessDetail fills the one-agent parts of l: last probe, uptime over
// 24 h (from the probes) and 7 and 30 days (from the daily roll-ups), the
// p50 latency of the answering probes of the last 24 h, each interface's
// latest probe, and the last 30 daily roll-ups.
func (s *Service) livenessDetail(db *gorm.DB, id string, l *Liveness) error {
	now := s.now()
	var ifaces []probeIfaceRow
	if err := db.Where("agent_id = ?", id).Order("url, binding, protocol_version").Find(&ifaces).Error; err != nil {
		return translate(err)
	}
	l.Interfaces = make([]InterfaceLiveness, len(ifaces))
	for i, f := range ifaces {
		l.Interfaces[i] = InterfaceLiveness{URL: f.URL, Binding: f.Binding, ProtocolVersion: f.ProtocolVersion, Outcome: f.Outcome,
			ErrorClass: f.ErrorClass, LatencyMS: f.LatencyMS, HTTPStatus: f.HTTPStatus, RPCCode: f.RPCCode, Message: f.Message,
			LastProbeAt: f.LastProbeAt.UTC(), FailingSince: utcPtr(f.FailingSince)}
		if l.LastProbeAt == nil || f.LastProbeAt.After(*l.LastProbeAt) {
			l.LastProbeAt = utcPtr(&f.LastProbeAt)
		}
	}
	var h24 struct {
		Total int64
		Up    int64
	}
	since := now.Add(-24 * time.Hour)
	err := db.Raw(`SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN outcome IN ? THEN 1 ELSE 0 END), 0) AS up
		FROM probes WHERE agent_id = ? AND at > ? AND outcome <> ?`,
		[]string{OutcomeAnswering, OutcomeAuthRequired}, id, since, OutcomeRateLimited).Scan(&h24).Error
	if err != nil {
		return translate(err)
	}
	l.Uptime = &Uptime{H24: ratio(h24.Up, h24.Total)}
	if h24.Up > 0 {
		var p50 []int64
		err := db.Raw(`SELECT latency_ms FROM probes WHERE agent_id = ? AND at > ? AND outcome IN ?
			ORDER BY latency_ms LIMIT 1 OFFSET ?`, id, since, []string{OutcomeAnswering, OutcomeAuthRequired}, (h24.Up-1)/2).Scan(&p50).Error
		if err != nil {
			return translate(err)
		}
		if len(p50) == 1 {
			l.P50MS = &p50[0]
		}
	}
	var days []probeDayRow
	first := dayOf(now.AddDate(0, 0, -(uptimeStripDays - 1)))
	if err := db.Where("agent_id = ? AND day >= ?", id, first).Order("day").Find(&days).Error; err != nil {
		return translate(err)
	}
	l.Days = make([]UptimeDay, len(days))
	week := dayOf(now.AddDate(0, 0, -6))
	var d7, u7, d30, u30 int64
	for i, d := range days {
		l.Days[i] = UptimeDay{Day: d.Day, Probes: d.Probes, Up: d.Up, Nonconformant: d.Nonconformant, Down: d.Down}
		d30 += d.Probes
		u30 += d.Up
		if d.Day >= week {
			d7 += d.Probes
			u7 += d.Up
		}
	}
	l.Uptime.D7 = ratio(u7, d7)
	l.Uptime.D30 = ratio(u30, d30)
	return nil
}

// ratio is up/total rounded to 4 decimals, nil when total is 0.
func ratio(up, total int64) *float64 {
	if total == 0 {
		return nil
	}
	r := float64(up*10000/total) / 10000
	return &r
}

// Probes returns an agent's probe history, newest first, to whoever may read
// the agent (the same rule as its record). pageToken is the previous page's
// next token ("" for the first page); next is "" on the last page.
func (s *Service) Probes(ctx context.Context, p Principal, id string, limit int, pageToken string) (probes []Probe, next string, err error) {
	if limit <= 0 {
		limit = defaultProbePage
	}
	limit = min(limit, maxProbePage)
	var before int64
	if pageToken != "" {
		before, err = decodeProbeToken(pageToken)
		if err != nil {
			return nil, "", err
		}
	}
	if _, err := s.readable(ctx, p, id); err != nil {
		return nil, "", err
	}
	q := s.store.read(ctx).Where("agent_id = ?", id)
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var rows []probeRow
	if err := q.Order("id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, "", translate(err)
	}
	if len(rows) > limit {
		rows = rows[:limit]
		next = encodeProbeToken(rows[limit-1].ID)
	}
	probes = make([]Probe, len(rows))
	for i, r := range rows {
		probes[i] = Probe{ID: r.ID, At: r.At.UTC(), URL: r.URL, Binding: r.Binding, ProtocolVersion: r.ProtocolVersion,
			Outcome: r.Outcome, ErrorClass: r.ErrorClass, LatencyMS: r.LatencyMS, HTTPStatus: r.HTTPStatus, RPCCode: r.RPCCode, Message: r.Message}
	}
	redactProbes(p, probes)
	return probes, next, nil
}

// The probe page token is opaque to clients: the id to read below, with a
// prefix so a token of another list is refused.
func encodeProbeToken(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("probe:" + strconv.FormatInt(id, 10)))
}

func decodeProbeToken(tok string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 7 || len(b) > 32 || string(b[:6]) != "probe:" {
		return 0, ErrInvalidPageToken
	}
	id, err := strconv.ParseInt(string(b[6:]), 10, 64)
	if err != nil || id <= 0 {
		return 0, ErrInvalidPageToken
	}
	return id, nil
}

// pruneBatch bounds one delete statement of PruneProbes; maxPruneBatches
// bounds one call, so a long backlog is worked off over several calls
// without holding SQLite's writer for long.
const (
	pruneBatch      = 5000
	maxPruneBatches = 40
)

// PruneProbes deletes probes older than keepProbes and daily roll-ups older
// than keepDays (whole UTC days) and returns how many rows went. It is
// idempotent: replicas may each run it.
func (s *Service) PruneProbes(ctx context.Context, now time.Time, keepProbes, keepDays time.Duration) (int64, error) {
	now = utc(now)
	cut := now.Add(-keepProbes)
	var total int64
	for range maxPruneBatches {
		var n int64
		err := s.store.tx(ctx, func(tx *gorm.DB) error {
			res := tx.Exec(`DELETE FROM probes WHERE id IN (SELECT id FROM probes WHERE at < ? ORDER BY at LIMIT ?)`, cut, pruneBatch)
			n = res.RowsAffected
			return res.Error
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			break
		}
	}
	firstDay := dayOf(now.Add(-keepDays))
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		res := tx.Exec(`DELETE FROM probe_days WHERE day < ?`, firstDay)
		total += res.RowsAffected
		return res.Error
	})
	return total, err
}

// SetProbing turns liveness probing of one agent on or off (admins only).
// Off drops its lease and makes its liveness unknown (a `liveness` change
// when it was known); on makes it due at once. The history is kept.
func (s *Service) SetProbing(ctx context.Context, p Principal, id string, enabled bool) (*Agent, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	return s.update(ctx, p, id, "set-probing", "", map[string]any{"enabled": enabled}, func(r *agentRow) (map[string]any, string, error) {
		if r.ProbeDisabled == !enabled {
			return nil, "", nil
		}
		if enabled {
			return map[string]any{"probe_disabled": false, "probe_next_at": nil, "probe_failures": 0}, "", nil
		}
		upd := map[string]any{"probe_disabled": true, "probe_lease_owner": "", "probe_lease_until": nil,
			"liveness": string(LivenessUnknown), "liveness_since": nil}
		if LivenessState(r.Liveness) != LivenessUnknown {
			return upd, ChangeLiveness, nil
		}
		return upd, "", nil
	})
}
