package registry

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ProbeResult is the probe of one interface.
type ProbeResult struct {
	URL             string
	Binding         string
	ProtocolVersion string
	Outcome         string // Outcome* constants
	ErrorClass      string // the fetcher's class for unreachable probes
	Latency         time.Duration
	HTTPStatus      int
	RPCCode         int // the JSON-RPC or gRPC code of the reply, 0 when none
	Message         string
}

// ProbeRound is one probe of every interface of a leased agent.
type ProbeRound struct {
	AgentID string
	At      time.Time
	// Next is when the agent is due again (the prober adds jitter,
	// back-off and Retry-After).
	Next   time.Time
	Probes []ProbeResult
	// Unfinished are interfaces the round meant to probe but did not (its
	// deadline came, or their host's share was taken): each keeps its last
	// verdict instead of being dropped like an interface no longer probed.
	Unfinished []ProbeTarget
}

// ProbeTarget names one interface of an agent.
type ProbeTarget struct {
	URL, Binding, ProtocolVersion string
}

// maxProbeMessage bounds the stored message of a probe.
const maxProbeMessage = 512

// RecordProbes stores probe rounds of agents owner has leased, in one
// transaction: each probe as history, the latest state of each interface
// (interfaces no longer on the card are dropped), the day's roll-up, and
// the agent's liveness; a change of liveness state writes a `liveness`
// change-log row so mirrors and the search index follow. A round whose
// lease is no longer owner's (the agent was taken over after its lease
// expired) writes nothing and answers ErrLeaseLost in the returned slice;
// the second return is for the batch as a whole.
func (s *Service) RecordProbes(ctx context.Context, owner string, rounds []ProbeRound) ([]error, error) {
	errs := make([]error, len(rounds))
	if len(rounds) == 0 {
		return errs, nil
	}
	ids := make([]string, len(rounds))
	for i, r := range rounds {
		ids[i] = r.AgentID
	}
	out := make([]error, len(rounds))
	err := s.store.tx(ctx, func(tx *gorm.DB) error {
		clear(out)
		agents, err := s.lockAgents(tx, ids)
		if err != nil {
			return err
		}
		var changed []*agentRow
		var changedAt []time.Time
		for i, r := range rounds {
			a := agents[r.AgentID]
			switch {
			case a == nil:
				out[i] = ErrNotFound
				continue
			case a.ProbeLeaseOwner != owner:
				out[i] = ErrLeaseLost
				continue
			}
			st, err := s.recordRound(tx, a, r)
			if err != nil {
				return err
			}
			if st != LivenessState(a.Liveness) {
				changed = append(changed, a)
				changedAt = append(changedAt, utc(r.At))
			}
		}
		for i, a := range changed {
			if err := s.addChange(tx, a, a, ChangeLiveness, changedAt[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return errs, err
	}
	return out, nil
}

// recordRound writes one round and returns the agent's new state.
func (s *Service) recordRound(tx *gorm.DB, a *agentRow, r ProbeRound) (LivenessState, error) {
	at := utc(r.At)
	var prev []probeIfaceRow
	if err := tx.Where("agent_id = ?", a.ID).Find(&prev).Error; err != nil {
		return "", err
	}
	// An interface is its URL, binding and protocol version: one URL
	// listed for 1.0 and 0.3 is two interfaces (migrations 00171).
	type key struct{ url, binding, version string }
	old := make(map[key]probeIfaceRow, len(prev))
	for _, p := range prev {
		old[key{p.URL, p.Binding, p.ProtocolVersion}] = p
	}
	rows := make([]probeRow, 0, len(r.Probes))
	ifaces := make([]probeIfaceRow, 0, len(r.Probes))
	keep := map[key]bool{}
	day := probeDayRow{AgentID: a.ID, Day: dayOf(at)}
	var outcomes []string
	for _, p := range r.Probes {
		msg := truncateText(p.Message, maxProbeMessage)
		ms := p.Latency.Milliseconds()
		rows = append(rows, probeRow{AgentID: a.ID, At: at, URL: p.URL, Binding: p.Binding, ProtocolVersion: p.ProtocolVersion,
			Outcome: p.Outcome, ErrorClass: p.ErrorClass, LatencyMS: ms, HTTPStatus: p.HTTPStatus, RPCCode: p.RPCCode, Message: msg})
		k := key{p.URL, p.Binding, p.ProtocolVersion}
		if keep[k] {
			continue // the same interface listed twice is probed and kept once
		}
		keep[k] = true
		o, had := old[k]
		if p.Outcome == OutcomeRateLimited {
			// No verdict: the interface keeps its last one.
			if had {
				o.LastProbeAt = at
				ifaces = append(ifaces, o)
				outcomes = append(outcomes, o.Outcome)
			}
			continue
		}
		row := probeIfaceRow{AgentID: a.ID, URL: p.URL, Binding: p.Binding, ProtocolVersion: p.ProtocolVersion, Outcome: p.Outcome,
			ErrorClass: p.ErrorClass, LatencyMS: ms, HTTPStatus: p.HTTPStatus, RPCCode: p.RPCCode, Message: msg, LastProbeAt: at}
		if outcomeFailing(p.Outcome) {
			row.FailingSince = &at
			if had && o.FailingSince != nil && outcomeFailing(o.Outcome) {
				row.FailingSince = utcPtr(o.FailingSince)
			}
		}
		ifaces = append(ifaces, row)
		outcomes = append(outcomes, p.Outcome)
		day.Probes++
		switch {
		case outcomeUp(p.Outcome):
			day.Up++
			day.LatencyMSSum += ms
		case p.Outcome == OutcomeNonconformant:
			day.Nonconformant++
		default:
			day.Down++
		}
	}
	// Interfaces the round left keep their last verdict (ProbeRound.Unfinished).
	for _, u := range r.Unfinished {
		k := key{u.URL, u.Binding, u.ProtocolVersion}
		if o, had := old[k]; had && !keep[k] {
			keep[k] = true
			ifaces = append(ifaces, o)
			outcomes = append(outcomes, o.Outcome)
		}
	}
	if len(rows) > 0 {
		if err := tx.CreateInBatches(rows, 100).Error; err != nil {
			return "", err
		}
	}
	if err := tx.Where("agent_id = ?", a.ID).Delete(&probeIfaceRow{}).Error; err != nil {
		return "", err
	}
	if len(ifaces) > 0 {
		if err := tx.Create(&ifaces).Error; err != nil {
			return "", err
		}
	}
	if day.Probes > 0 {
		err := tx.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "agent_id"}, {Name: "day"}},
			DoUpdates: clause.Assignments(map[string]any{
				"probes":         gorm.Expr("probe_days.probes + ?", day.Probes),
				"up":             gorm.Expr("probe_days.up + ?", day.Up),
				"nonconformant":  gorm.Expr("probe_days.nonconformant + ?", day.Nonconformant),
				"down":           gorm.Expr("probe_days.down + ?", day.Down),
				"latency_ms_sum": gorm.Expr("probe_days.latency_ms_sum + ?", day.LatencyMSSum),
			}),
		}).Create(&day).Error
		if err != nil {
			return "", err
		}
	}
	st := deriveLiveness(outcomes)
	failures := 0
	if st == LivenessUnreachable {
		failures = a.ProbeFailures + 1
	}
	upd := map[string]any{
		"probe_lease_owner": "", "probe_lease_until": nil, "probe_next_at": utc(r.Next),
		"probe_failures": failures, "liveness": string(st),
	}
	if st != LivenessState(a.Liveness) {
		upd["liveness_since"] = at
		if st == LivenessUnknown {
			upd["liveness_since"] = nil
		}
	}
	return st, tx.Model(&agentRow{}).Where("id = ?", a.ID).Updates(upd).Error
}

// truncateText cuts s to at most n bytes on a rune boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
