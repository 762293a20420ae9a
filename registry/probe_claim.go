package registry

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/cardexhq/cardex/agentcard"
)

// probeLockKey serializes probe claimers on PostgreSQL, for the same reason
// as claimLockKey: the per-host cap counts leases exactly.
const probeLockKey = 0x63617264_65780003

// probeClaimable is the condition shared by both due reads: approved, with a
// current card, probing not turned off, probe lease free or expired.
const probeClaimable = `status = 'approved' AND current_version_seq > 0 AND probe_disabled = ?
	AND (probe_lease_owner = '' OR probe_lease_until <= ?)`

// probeNeverSQL reads agents never probed (probe_next_at NULL: due at once),
// in id order, through agents_probe_next (status, probe_next_at, id). The
// ORDER BY names the index's columns (status and probe_next_at are the same
// on every row read, so the order is by id): ordered by id alone,
// PostgreSQL with statistics from before the last probe round walked the
// primary key over every agent to find none never probed.
const probeNeverSQL = `SELECT id, host FROM agents WHERE probe_next_at IS NULL AND ` + probeClaimable + ` ORDER BY status, probe_next_at, id LIMIT ?`

// probeDueSQL reads agents whose next probe is due, oldest first.
const probeDueSQL = `SELECT id, host FROM agents WHERE probe_next_at <= ? AND ` + probeClaimable + ` ORDER BY probe_next_at, id LIMIT ?`

// probeHostLoadSQL counts, per host, the agents with a live probe lease
// and those with a live crawl lease (a host appears up to twice; the
// counts add up): probes yield to the crawler's per-host politeness
// (docs/security.md), in this process and across replicas. Each half
// reads only live leases through its index (agents_host_probe_lease,
// agents_host_lease); one condition with OR read every agent of the hosts.
const probeHostLoadSQL = `SELECT host, COUNT(*) AS n FROM agents WHERE host IN ?
	AND probe_lease_until > ? AND probe_lease_owner <> '' GROUP BY host
	UNION ALL
	SELECT host, COUNT(*) AS n FROM agents WHERE host IN ?
	AND lease_until > ? AND lease_owner <> '' GROUP BY host`

// DueProbe is an agent leased for probing: its interfaces from the current
// card version.
type DueProbe struct {
	ID         string
	Host       string
	Failures   int // consecutive rounds in which no interface answered
	Liveness   LivenessState
	LeaseUntil time.Time
	Interfaces []agentcard.Interface
	// CuratorApproved is true when the approval that made the agent public
	// was a curator's (an admin's approve or restore), not the
	// --auto-approve policy's: only then are interfaces off the card's
	// registrable domain probed (docs/liveness.md, docs/threats.md K.99).
	CuratorApproved bool
}

// approvalActionsSQL reads the audit entries that can make an agent
// approved, oldest first: the last one per agent says who approved it.
const approvalActionsSQL = `SELECT agent_id, action FROM audit_log WHERE agent_id IN ? AND action IN ?
	ORDER BY agent_id, seq`

// curatorApproved maps each of ids to whether its latest approval was a
// curator's: an `approve` or `restore` entry by a person or token, not an
// `auto-approve` entry of the policy (docs/claims.md).
func curatorApproved(tx *gorm.DB, ids []string) (map[string]bool, error) {
	var rows []struct {
		AgentID string
		Action  string
	}
	actions := []string{string(ActionApprove), string(ActionRestore), ActionAutoApprove}
	if err := tx.Raw(approvalActionsSQL, ids, actions).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, r := range rows {
		out[r.AgentID] = r.Action != ActionAutoApprove
	}
	return out, nil
}

// ClaimProbes leases up to limit agents due for a liveness probe to owner
// until now+leaseTTL, at most perHost per host counting crawl leases too
// (≤ 0 means 2), never-probed agents first, then oldest due. Like ClaimDue,
// two claimers (in one process or in replicas sharing PostgreSQL) never get
// the same agent while its lease lives, and a recorded round moves the
// agent's next probe one interval ahead, so no interface is probed twice in
// one interval.
func (s *Service) ClaimProbes(ctx context.Context, owner string, now time.Time, leaseTTL time.Duration, limit, perHost int) ([]DueProbe, error) {
	perHost, err := leaseArgs(owner, limit, perHost)
	if err != nil || limit <= 0 {
		return nil, err
	}
	now = utc(now)
	until := utc(now.Add(leaseTTL))
	var out []DueProbe
	err = s.claimLeases(ctx, int64(probeLockKey),
		func(tx *gorm.DB) ([]string, error) { return s.pickProbes(tx, now, limit, perHost) },
		func(tx *gorm.DB, ids []string) (err error) {
			err = tx.Exec(`UPDATE agents SET probe_lease_owner = ?, probe_lease_until = ?
			WHERE id IN ? AND `+probeClaimable, owner, until, ids, false, now).Error
			if err != nil {
				return err
			}
			out, err = probesClaimed(tx, ids, owner, until)
			return err
		})
	return out, translate(err)
}

// pickProbes chooses up to limit agents under the per-host cap: never
// probed first, then due, each read bounded to 4×limit rows.
func (s *Service) pickProbes(tx *gorm.DB, now time.Time, limit, perHost int) ([]string, error) {
	chunk := max(4*limit, 64)
	var rows []struct {
		ID   string
		Host string
	}
	if err := tx.Raw(probeNeverSQL, false, now, chunk).Scan(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) < chunk {
		var due []struct {
			ID   string
			Host string
		}
		if err := tx.Raw(probeDueSQL, now, false, now, chunk-len(rows)).Scan(&due).Error; err != nil {
			return nil, err
		}
		rows = append(rows, due...)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	load := map[string]int{}
	var hosts []string
	for _, r := range rows {
		if _, ok := load[r.Host]; !ok {
			load[r.Host] = 0
			hosts = append(hosts, r.Host)
		}
	}
	var counts []struct {
		Host string
		N    int
	}
	if err := tx.Raw(probeHostLoadSQL, hosts, now, hosts, now).Scan(&counts).Error; err != nil {
		return nil, err
	}
	for _, c := range counts {
		load[c.Host] += c.N
	}
	var picked []string
	for _, r := range rows {
		if len(picked) == limit {
			break
		}
		if load[r.Host] < perHost {
			load[r.Host]++
			picked = append(picked, r.ID)
		}
	}
	return picked, nil
}

// probesClaimed reads the agents just leased with the interfaces of their
// current card.
func probesClaimed(tx *gorm.DB, ids []string, owner string, until time.Time) ([]DueProbe, error) {
	var rows []struct {
		ID            string
		Host          string
		ProbeFailures int
		Liveness      string
		Card          string
	}
	err := tx.Raw(`SELECT a.id, a.host, a.probe_failures, a.liveness, v.card FROM agents a
		JOIN card_versions v ON v.agent_id = a.id AND v.seq = a.current_version_seq
		WHERE a.id IN ? AND a.probe_lease_owner = ? ORDER BY a.id`, ids, owner).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	curated, err := curatorApproved(tx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]DueProbe, 0, len(rows))
	for _, r := range rows {
		d := DueProbe{ID: r.ID, Host: r.Host, Failures: r.ProbeFailures, Liveness: LivenessState(r.Liveness), LeaseUntil: until,
			CuratorApproved: curated[r.ID]}
		var c agentcard.Card
		if json.Unmarshal([]byte(r.Card), &c) == nil {
			d.Interfaces = c.Interfaces
		}
		out = append(out, d)
	}
	return out, nil
}

// ReleaseProbeLeases gives back every probe lease owner holds (graceful
// shutdown), so another replica probes those agents at once.
func (s *Service) ReleaseProbeLeases(ctx context.Context, owner string) error {
	return s.store.tx(ctx, func(tx *gorm.DB) error {
		return tx.Exec("UPDATE agents SET probe_lease_owner = '', probe_lease_until = NULL WHERE probe_lease_owner = ?", owner).Error
	})
}

// ProbeLeaseHeld reports whether owner still holds agent id's probe lease:
// false once an admin turned its probing off, it left approval, or another
// prober took it over. The prober asks between the interfaces of a round,
// so turning probing off stops a round in flight within one probe timeout
// (docs/liveness.md, docs/threats.md K.98).
func (s *Service) ProbeLeaseHeld(ctx context.Context, owner, id string, now time.Time) (bool, error) {
	var n int64
	err := s.store.read(ctx).Raw(`SELECT COUNT(*) FROM agents WHERE id = ? AND probe_lease_owner = ? AND probe_lease_until > ?
		AND status = 'approved' AND probe_disabled = ?`, id, owner, utc(now), false).Scan(&n).Error
	return n > 0, translate(err)
}
