package registry

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"
)

// batchWrites collects the rows a RecordFetches batch inserts, so each kind
// is one multi-row statement instead of one per result.
type batchWrites struct {
	attempts []fetchRow
	versions []versionRow
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
	if len(w.versions) > 0 {
		if err := tx.Create(&w.versions).Error; err != nil {
			return err
		}
	}
	for _, v := range w.verdicts {
		if err := tx.Exec("UPDATE card_versions SET trust = ?, verdict = ? WHERE agent_id = ? AND seq = ?",
			v.trust, v.verdict, v.agentID, v.seq).Error; err != nil {
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
	if len(w.changes) == 0 {
		return nil
	}
	if s.store.dialect == DialectPostgres {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", int64(changeLockKey)).Error; err != nil {
			return err
		}
	}
	return tx.Create(&w.changes).Error
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
// (RELIABILITY.md I.81): valid UTF-8, no control characters (CR/LF, ANSI
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
