package registry

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"
)

// batchWrites collects the rows a RecordFetches batch inserts, so each kind
// is one multi-row statement instead of one per result.
type batchWrites struct {
	agents   []agentUpdate
	attempts []fetchRow
	versions []versionRow
	views    []viewRow
	verdicts []versionVerdict
	changes  []changeRow
}

// versionVerdict is a re-verification's new verdict for a stored version.
type versionVerdict struct {
	agentID string
	seq     int64
	trust   string
	verdict string
}

func (w *batchWrites) attempt(agentID string, a FetchAttempt, result string, at time.Time) {
	ms := a.DurationMS
	if ms == 0 {
		ms = a.Duration.Milliseconds()
	}
	w.attempts = append(w.attempts, fetchRow{AgentID: agentID, At: at, URL: a.URL, HTTPStatus: a.HTTPStatus, DurationMS: ms,
		Bytes: a.Bytes, ErrorClass: a.ErrorClass, Message: cleanMessage(a.Message), Result: result})
}

// flush writes the collected rows. The change-log rows go last, under the
// PostgreSQL change lock (changeLockKey: seq order = commit order), so the
// lock is held only for the insert and the commit.
func (s *Service) flush(tx *gorm.DB, w *batchWrites) error {
	if err := s.updateAgents(tx, w.agents); err != nil {
		return err
	}
	if len(w.versions) > 0 {
		if err := tx.Create(&w.versions).Error; err != nil {
			return err
		}
	}
	if len(w.views) > 0 {
		if err := tx.Create(&w.views).Error; err != nil {
			return err
		}
	}
	for _, v := range w.verdicts {
		if err := tx.Exec("UPDATE card_versions SET trust = ?, verdict = ?, reverify = FALSE WHERE agent_id = ? AND seq = ?",
			v.trust, v.verdict, v.agentID, v.seq).Error; err != nil {
			return err
		}
		// The listing's copy (views.go), in the same transaction.
		if err := tx.Exec("UPDATE card_views SET verdict = ? WHERE agent_id = ? AND seq = ?",
			v.verdict, v.agentID, v.seq).Error; err != nil {
			return err
		}
	}
	if len(w.attempts) > 0 {
		if err := tx.Create(&w.attempts).Error; err != nil {
			return err
		}
		if err := s.trimAttempts(tx, w.attempts); err != nil {
			return err
		}
	}
	return s.addChanges(tx, w.changes)
}

// trimAttempts keeps the newest KeepFetchAttempts trace rows of each agent
// of the batch, in one statement: the subquery finds an agent's oldest row
// to keep through the (agent_id, id) index and is NULL (nothing deleted)
// while the agent has fewer rows than that.
func (s *Service) trimAttempts(tx *gorm.DB, rows []fetchRow) error {
	ids := make([]string, 0, len(rows))
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		if !seen[r.AgentID] {
			seen[r.AgentID] = true
			ids = append(ids, r.AgentID)
		}
	}
	return tx.Exec(`DELETE FROM fetch_attempts WHERE agent_id IN ? AND id < (
		SELECT k.id FROM fetch_attempts k WHERE k.agent_id = fetch_attempts.agent_id
		ORDER BY k.id DESC LIMIT 1 OFFSET ?)`, ids, s.cfg.KeepFetchAttempts-1).Error
}

// cleanMessage makes a fetched error message safe to store and show
// (docs/threats.md I.81): valid UTF-8, no control characters (CR/LF, ANSI
// escapes), at most 1024 bytes.
func cleanMessage(m string) string {
	m = strings.ToValidUTF8(m, "\uFFFD")
	m = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, m)
	if len(m) > 1024 {
		m = strings.ToValidUTF8(m[:1024], "")
	}
	return m
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// agentUpdate is the new values of one agent's columns.
type agentUpdate struct {
	id   string
	cols map[string]any
}

// agentColumnTypes are the agents columns a crawl result writes, with
// their PostgreSQL types: parameters in a VALUES list have no type of their
// own there, so each is cast. SQLite takes them as bound.
var agentColumnTypes = map[string]string{
	"lease_owner": "text", "lease_until": "timestamptz", "next_fetch_at": "timestamptz", "last_fetched_at": "timestamptz",
	"consecutive_failures": "integer", "consecutive_missing": "integer", "failing_since": "timestamptz",
	"last_success_at": "timestamptz", "last_error_class": "text", "last_error_status": "integer",
	"last_error_message": "text", "last_error_at": "timestamptz", "etag": "text", "last_modified": "text",
	"fetched_url": "text", "health": "text", "trust": "text", "updated_at": "timestamptz",
	"latest_version_seq": "bigint", "last_changed_at": "timestamptz", "candidate_version_seq": "bigint",
	"needs_review": "boolean", "current_version_seq": "bigint", "verified_thumbprints": "text", "name": "text",
	"status": "text", "auto_approve_held": "text", // approval by policy (autoapprove.go)
}

// updateAgents writes the batch's agent updates with one UPDATE … FROM a
// VALUES list per set of columns (results of one kind, a 304 or a failure,
// set the same columns), instead of one statement and round trip per
// agent.
func (s *Service) updateAgents(tx *gorm.DB, ups []agentUpdate) error {
	groups := map[string][]agentUpdate{}
	var order []string
	for _, u := range ups {
		cols := slices.Sorted(maps.Keys(u.cols))
		sig := strings.Join(cols, ",")
		if _, ok := groups[sig]; !ok {
			order = append(order, sig)
		}
		groups[sig] = append(groups[sig], u)
	}
	for _, sig := range order {
		cols := strings.Split(sig, ",")
		ph := make([]string, len(cols)+1)
		ph[0] = "?"
		for i, c := range cols {
			typ, ok := agentColumnTypes[c]
			if !ok {
				return fmt.Errorf("registry: no type for agents.%s", c)
			}
			ph[i+1] = "?"
			if s.store.dialect == DialectPostgres {
				ph[i+1] = "CAST(? AS " + typ + ")"
			}
		}
		row := "(" + strings.Join(ph, ", ") + ")"
		var q strings.Builder
		q.WriteString("WITH v(id, " + sig + ") AS (VALUES ")
		args := make([]any, 0, len(groups[sig])*(len(cols)+1))
		for i, u := range groups[sig] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(row)
			args = append(args, u.id)
			for _, c := range cols {
				args = append(args, u.cols[c])
			}
		}
		q.WriteString(") UPDATE agents SET ")
		for i, c := range cols {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(c + " = v." + c)
		}
		q.WriteString(" FROM v WHERE agents.id = v.id")
		if err := tx.Exec(q.String(), args...).Error; err != nil {
			return err
		}
	}
	return nil
}
